// Derive-program dataflow: producer -> consumer order over carries.
#pragma once

#include <string>
#include <vector>

#include "verifier/manifest.h"

namespace loadplan::verifier {

struct UsageIndex;

struct DeriveOrder {
  // Derive programs in the smallest topological order of names in natural order
  // (base::NaturalLess: "l2" before "l10"), producer before consumer. Empty `cycle` when
  // acyclic.
  std::vector<std::string> order;
  std::vector<std::string> cycle;  // program names forming one cycle: a -> b -> ... -> a
};

// Edges: program A -> program B when B reads (read/readwrite) a carry that A writes.
// Programs or calls marked malformed are ignored.
DeriveOrder OrderDerivePrograms(const Manifest& m);
// The same, from a usage index already built for `m` (BuildUsage(m)).
DeriveOrder OrderDerivePrograms(const Manifest& m, const UsageIndex& usage);

}  // namespace loadplan::verifier
