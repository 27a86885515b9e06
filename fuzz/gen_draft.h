// Internal to the manifest generator (fuzz/gen_*.cc): the manifest under construction and
// what the generator knows about it (sizes, producers, who still needs a reader).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "verifier/manifest.h"

namespace loadplan::fuzz::detail {

// A buffer a derive call can read: a checkpoint tensor or a carry a derive call wrote.
struct Readable {
  std::string name;
  base::Dtype dtype = base::Dtype::kU8;
  int64_t count = 0;               // elements (fixed shapes only)
  std::optional<size_t> producer;  // derive program (creation index) that writes it
};

struct Draft {
  verifier::Manifest m;
  std::set<std::string> names;       // every buffer, program and kernel name taken
  std::set<std::string> tensors;     // checkpoint tensor names taken
  std::vector<Readable> u8, bf16;    // derive-readable buffers by dtype
  std::vector<size_t> derive_order;  // creation order of derive programs (index into m.programs)
  std::vector<std::string> unread;   // carries and weights that still need a reader
  std::vector<std::string> serve_reads;   // buffers serving calls may read
  std::vector<std::string> serve_writes;  // buffers serving calls may write
  std::vector<std::string> collective_targets;

  verifier::Buffer& Add(verifier::Buffer b);
  [[nodiscard]] verifier::Buffer* Find(const std::string& name);
};

// A uniform draw in [0, n) whatever the current size: feature choices must not collapse to
// their first option at small sizes (rc::gen::inRange scales with the size).
int Roll(int n);

// Draws (inside rc::gen::exec) a name not yet in `taken`, from `stem`-like names that
// share prefixes with each other and need pointer escaping now and then.
std::string FreshName(std::set<std::string>& taken, const std::vector<std::string>& stems);

// The variables (names sharing prefixes, bounds biased to boundaries).
std::vector<verifier::Variable> DrawVars();
// A fixed element count, biased to tiny values; at most `max` when given.
int64_t DrawCount(std::optional<int64_t> max = std::nullopt);
// A fixed shape with exactly `count` elements.
std::vector<verifier::Expr> DrawFixedShape(int64_t count);
// A shape over the variables (those with a max of at most `max_var`) whose byte size
// evaluates at the box's max corner.
std::vector<verifier::Expr> DrawVarShape(const verifier::Manifest& m, base::Dtype dtype,
                                         int64_t max_var = int64_t{1} << 40);
base::Dtype DrawDtype();
// `text` parsed (the canonical AST of the expression).
verifier::Expr ParseOrDie(const std::string& text);
// Every variable at its max: shapes here are monotone, so sizes peak there.
verifier::Assignment MaxCorner(const verifier::Manifest& m);

void DrawDerive(Draft& d);   // the derive DAG
void DrawServing(Draft& d);  // serving buffers and programs; consumes d.unread

}  // namespace loadplan::fuzz::detail
