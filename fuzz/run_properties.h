// The fuzz library's public seam: run every fuzz property with RapidCheck's public runner
// (rc::check), on generated manifests or around one manifest's text. `loadplan fuzz` calls it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace loadplan::fuzz {

struct PropertyRunOptions {
  int cases = 1000;                   // successful cases per property; >= 1
  std::optional<uint64_t> seed;       // RapidCheck's seed; default: RC_PARAMS' seed, else random
  std::optional<std::string> around;  // a manifest's text: fuzz it instead of generated manifests
  std::string around_name = "the manifest";  // how the output names it
};

struct PropertyRunResult {
  int passed = 0;
  int failed = 0;
  uint64_t seed = 0;             // the seed every property ran with
  bool around_verifies = false;  // with `around`: it verified, so its model was fuzzed too
};

// Without `around`: the 8 properties on generated manifests (soundness, plan checker, host
// replay, completeness, round trips, totality). With `around`: byte mutations of the text and,
// when it verifies clean, its mutations, plan and round trip. Prints a header, one line per
// property ("ok   name (1.2 s)" / "FAIL name ..." with RapidCheck's counterexample and a
// reproduce line) and a summary to `out`. RapidCheck reads RC_PARAMS once per process, so
// `cases` and `seed` are merged into RC_PARAMS before its first use: call this once per
// process, before any other RapidCheck use.
PropertyRunResult RunProperties(const PropertyRunOptions& options, std::ostream& out);

}  // namespace loadplan::fuzz
