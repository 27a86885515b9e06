// The ladder of a variable: the values the frontier reports a limit for.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "verifier/expr.h"

namespace loadplan::simulator::capacity {

// Sorted, without repeats: r.min, every power of two strictly between r.min and r.max, r.max,
// and each of `extra` inside [r.min, r.max] (values outside are dropped). At most 65 + extra.
std::vector<int64_t> Ladder(verifier::Range r, std::span<const int64_t> extra = {});

}  // namespace loadplan::simulator::capacity
