// `loadplan fuzz`: runs the fuzz properties (fuzz/properties.h) with RapidCheck, on
// generated manifests or around one manifest file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loadplan::cli {

struct FuzzCliOptions {
  std::optional<int> cases;      // --cases N: successful cases per property (default 1000)
  std::optional<uint64_t> seed;  // --seed S: RapidCheck's seed (default: RC_PARAMS', else random)
  std::optional<std::string> around;  // --around FILE: fuzz that manifest instead of generated ones
};

// Without --around: every property on generated manifests (soundness, plan checker, host
// backend replay, completeness, round trip, totality). With --around FILE: byte mutations of
// the file (totality) and, when it verifies, every mutator on it (completeness), its plan
// and its round trip. Prints one line per property; a failure prints RapidCheck's
// counterexample and how to reproduce it. Exit code: 0 all passed, 1 a property failed,
// 2 the file cannot be read.
int RunFuzz(const FuzzCliOptions& options);

}  // namespace loadplan::cli
