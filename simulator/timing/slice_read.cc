#include "simulator/timing/slice_read.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace loadplan::simulator::timing {

std::string_view SliceReadName(SliceRead r) {
  switch (r) {
    case SliceRead::kAuto: return "auto";
    case SliceRead::kRuns: return "runs";
    case SliceRead::kSpan: return "span";
    case SliceRead::kMap: return "map";
  }
  return "auto";
}

std::optional<SliceRead> SliceReadOf(std::string_view name) {
  for (SliceRead r : {SliceRead::kAuto, SliceRead::kRuns, SliceRead::kSpan, SliceRead::kMap}) {
    if (SliceReadName(r) == name) return r;
  }
  return std::nullopt;
}

uint64_t SpanPages(const base::SliceRuns& runs) {
  if (runs.count == 0 || runs.run_bytes == 0) return 0;
  const uint64_t begin = runs.first / kPageBytes;
  const uint64_t end = (runs.first + runs.span() + kPageBytes - 1) / kPageBytes;
  return end - begin;
}

double SliceReadSeconds(SliceRead how, const base::SliceRuns& runs, const SliceReadCosts& costs) {
  const double threads = static_cast<double>(std::max<uint32_t>(costs.threads, 1));
  constexpr double kNotWeighed = std::numeric_limits<double>::infinity();
  switch (how) {
    case SliceRead::kAuto: return 0;
    case SliceRead::kRuns: return static_cast<double>(runs.count) * costs.per_run_s / threads;
    case SliceRead::kSpan:
      if (costs.read_rate <= 0) return kNotWeighed;
      return static_cast<double>(runs.span() - runs.bytes()) / costs.read_rate;
    case SliceRead::kMap:
      if (costs.per_page_s <= 0) return kNotWeighed;
      return (static_cast<double>(SpanPages(runs)) * costs.per_page_s +
              static_cast<double>(runs.count) * costs.per_map_run_s) /
             threads;
  }
  return kNotWeighed;
}

SliceRead ChooseSliceRead(const base::SliceRuns& runs, const SliceReadCosts& costs) {
  SliceRead best = SliceRead::kRuns;
  if (runs.count <= 1) return best;
  double least = SliceReadSeconds(best, runs, costs);
  for (const SliceRead r : {SliceRead::kSpan, SliceRead::kMap}) {
    if (const double s = SliceReadSeconds(r, runs, costs); s < least) {
      best = r;
      least = s;
    }
  }
  return best;
}

std::optional<base::SliceRuns> PlannedSliceRuns(const PlannedBuffer& b) {
  if (!b.slice || b.slice->dim == 0 || !b.slice->extent || !b.shape) return std::nullopt;
  const verifier::TensorSlice& s = *b.slice;
  if (s.dim >= b.shape->size()) return std::nullopt;
  std::vector<uint64_t> tensor = *b.shape;
  tensor[s.dim] = *s.extent;
  base::Result<base::SliceRuns> runs = base::RunsOfSlice(tensor, b.dtype, s.dim, s.start, s.length);
  if (!runs.ok()) return std::nullopt;
  return *runs;
}

}  // namespace loadplan::simulator::timing
