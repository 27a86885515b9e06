// What the slice-read probes (run_read_probe.h, map_read_probe.h) share: work on several
// threads at once, and the median of timed passes.
#pragma once

#include <cstdint>
#include <functional>

#include "base/status.h"

namespace loadplan::backend {

// Runs work(t) for t = 0 .. threads - 1, each on its own thread, all at once, and joins them:
// the first failure by thread order, or OK.
base::Status OnThreads(uint32_t threads, const std::function<base::Status(uint32_t)>& work);

// pass() four times, the first a warm-up: the median of the other three (seconds), or the
// first failure.
base::Result<double> MedianOfThree(const std::function<base::Result<double>()>& pass);

}  // namespace loadplan::backend
