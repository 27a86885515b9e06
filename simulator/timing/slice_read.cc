#include "simulator/timing/slice_read.h"

#include <algorithm>
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

SliceRead ChooseSliceRead(const base::SliceRuns& runs, const SliceReadCosts& costs) {
  if (runs.count <= 1 || costs.read_rate <= 0) return SliceRead::kRuns;
  const double gap_bytes = static_cast<double>(runs.span() - runs.bytes());
  const double preads_s = static_cast<double>(runs.count) * costs.per_run_s /
                          static_cast<double>(std::max<uint32_t>(costs.threads, 1));
  return gap_bytes / costs.read_rate < preads_s ? SliceRead::kSpan : SliceRead::kRuns;
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
