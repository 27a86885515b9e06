// Default case counts for the fuzz properties (docs/reliability.md "CI setting"): 10^4 successful
// cases per property, 10^3 in an AddressSanitizer build. Include it from each fuzz test
// executable; RC_PARAMS set in the environment wins (reproduce=..., seed=..., max_success=...).
#pragma once

#include <cstdlib>

namespace loadplan::fuzz {

#if defined(__SANITIZE_ADDRESS__)
#define LOADPLAN_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOADPLAN_FUZZ_ASAN 1
#endif
#endif

#ifdef LOADPLAN_FUZZ_ASAN
inline constexpr const char* kDefaultRcParams = "max_success=1000";
#else
inline constexpr const char* kDefaultRcParams = "max_success=10000";
#endif

// Runs before main; RapidCheck reads RC_PARAMS lazily, at the first property.
inline const bool kRcDefaultsApplied =
    (::setenv("RC_PARAMS", kDefaultRcParams, /*overwrite=*/0), true);

}  // namespace loadplan::fuzz
