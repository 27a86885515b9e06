// How a slice along a dimension > 0 is read (issue 30): its runs one pread each, packed into a
// pinned chunk, or its covering span read whole and the runs gathered on the way to the device.
// Runs pay a small read per run; a span pays the bytes between the runs. The choice compares the
// two on the machine's figures (docs/deploy.md, "Tensor parallel", and docs/runtime.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/slice_runs.h"
#include "simulator/plan.h"

namespace loadplan::simulator::timing {

enum class SliceRead : uint8_t {
  kAuto,  // ChooseSliceRead per slice
  kRuns,  // a pread per run
  kSpan,  // the covering bytes, gathered
  kMap,   // the covering pages mapped, the runs copied out (buffered only; never auto's yet)
};

std::string_view SliceReadName(SliceRead r);  // "auto", "runs", "span", "map"
std::optional<SliceRead> SliceReadOf(std::string_view name);

// The cost of one run's pread from the page cache on one I/O thread, as the choice weighs it.
// On the H100 of 2026-12-06 (docs/performance.md, "Tensor-parallel ranks") a TP=8 column split's
// 131,072 runs of 1-3.5 KiB took 1-2.3 us each beside their bytes; at 1 us the choice took the
// faster path of both splits measured (TP=8: runs, 1.20x the span; TP=2: o by span, down by
// runs, 1.29x either path alone). The default where a profile has no figure: `calibrate`
// measures the machine's own (rates.per_run_s, backend/measure/run_read_probe.h).
inline constexpr double kDefaultPerRunSeconds = 1.0e-6;

struct SliceReadCosts {
  double per_run_s = kDefaultPerRunSeconds;  // one run's pread, one thread
  double read_rate = 0;                      // bytes/s of bulk reads, all threads (0: unknown)
  uint32_t threads = 1;                      // the I/O threads sharing the runs
};

// kRuns or kSpan for `runs` (a single run, or an unknown read rate, is kRuns): the span when
// reading the bytes between the runs costs less than a pread per run.
SliceRead ChooseSliceRead(const base::SliceRuns& runs, const SliceReadCosts& costs);

// The runs a fill of `b` reads, as the plan knows them: for a slice along a dimension > 0 with
// its tensor's `extent` (the tensor is the buffer's shape with the extent there), the runs the
// load's preflight finds in the checkpoint; nullopt for anything else (no slice, dim 0, no
// extent, a variable shape), which the load reads run by run.
std::optional<base::SliceRuns> PlannedSliceRuns(const PlannedBuffer& b);

}  // namespace loadplan::simulator::timing
