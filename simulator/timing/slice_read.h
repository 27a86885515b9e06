// How a slice along a dimension > 0 is read (issue 30): its runs one pread each, packed into a
// pinned chunk; its covering span read whole and the runs gathered on the way to the device; or
// the file mapped and the runs copied out, their pages faulting in. Runs pay a small read per
// run; a span pays the bytes between the runs; a map pays per page of the span and per run
// copied. The choice compares them on the machine's figures (docs/deploy.md, "Tensor
// parallel", and docs/runtime.md).
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
  kMap,   // the covering pages mapped, the runs copied out (buffered only)
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

// The cost of one page of a span mapped, on each of 12 I/O threads gathering at once:
// `calibrate`'s one-pattern map probe (256-byte runs 16 KiB apart, the span populated before the
// copy: the runs' own cost is a few percent of it) on an H100 host (L3 300 MiB) on 2026-12-06,
// 0.035 and 0.033 us in two calls (docs/performance-journal.md, "Auto maps"). There
// a TP=8 column split read by map loaded at 3.1x its runs and 3.5x its span; on every pattern
// measured (bench_slice_reads, both machines) the map beat the better of the other two. The
// default where a profile has no figure (rates.per_page_s).
inline constexpr double kDefaultPerPageSeconds = 3.5e-8;

// The cost of one run copied out of a mapping beside its bytes, on each of the I/O threads, where
// a profile has no figure (rates.per_map_run_s): none, as before `calibrate`'s map probe was
// solved for pages and runs (backend/measure/map_read_probe.h). On the build machine that probe
// says 0.0072-0.0075 us a run with 2 threads, and with it the gather of gpt-oss's 12-byte down
// scales at TP=8 ran at 1.09-1.18x the model's rate, against 0.44x without it
// (docs/performance-journal.md, "A mapped run's cost").
// No GPU host has measured it yet, so a profile without it predicts as it did.
inline constexpr double kDefaultPerMapRunSeconds = 0;

// The page a map read maps: the span's pages, from the one holding the first run's first
// byte to the one holding the last run's last byte (4 KiB: x86-64's and the GPU hosts').
inline constexpr uint64_t kPageBytes = 4096;

struct SliceReadCosts {
  double per_run_s = kDefaultPerRunSeconds;  // one run's pread, on each of the threads
  double read_rate = 0;                      // bytes/s of bulk reads, all threads (0: unknown)
  // One page of a span faulted in through the mapping, on each of the threads, the map read's
  // cost per page (backend/measure/map_read_probe.h); 0 when reading with O_DIRECT, and then
  // auto does not take the map.
  double per_page_s = kDefaultPerPageSeconds;
  // One run copied out of the mapping, beside its bytes, on each of the threads (the map's
  // other cost: a TP=8 split of gpt-oss's MXFP4 experts has runs of 12 and 192 bytes).
  double per_map_run_s = kDefaultPerMapRunSeconds;
  uint32_t threads = 1;  // the I/O threads sharing the runs
};

// The pages of `runs`' span (kPageBytes each, counted from the tensor's start: the file offset
// of a safetensors tensor is 8-byte aligned, so a page boundary may fall elsewhere, by one page
// at most at either end).
uint64_t SpanPages(const base::SliceRuns& runs);

// The stream time `how` adds to a slice's read beyond its bytes: runs, count x per_run_s /
// threads; span, the bytes between the runs at the read rate; map, the span's pages x
// per_page_s + count x per_map_run_s, over the threads. Infinity for a path the costs do not weigh
// (span: no read rate; map: no per-page cost); 0 for kAuto.
double SliceReadSeconds(SliceRead how, const base::SliceRuns& runs, const SliceReadCosts& costs);

// The path of least SliceReadSeconds for `runs` (ties go to runs, then span); a single run is
// kRuns, and so is every slice when neither the span nor the map is weighed.
SliceRead ChooseSliceRead(const base::SliceRuns& runs, const SliceReadCosts& costs);

// The runs a fill of `b` reads, as the plan knows them: for a slice along a dimension > 0 with
// its tensor's `extent` (the tensor is the buffer's shape with the extent there), the runs the
// load's preflight finds in the checkpoint; nullopt for anything else (no slice, dim 0, no
// extent, a variable shape), which the load reads run by run.
std::optional<base::SliceRuns> PlannedSliceRuns(const PlannedBuffer& b);

}  // namespace loadplan::simulator::timing
