#include "simulator/timing/slice_read.h"

#include <algorithm>

namespace loadplan::simulator::timing {

std::string_view SliceReadName(SliceRead r) {
  switch (r) {
    case SliceRead::kAuto: return "auto";
    case SliceRead::kRuns: return "runs";
    case SliceRead::kSpan: return "span";
  }
  return "auto";
}

std::optional<SliceRead> SliceReadOf(std::string_view name) {
  for (SliceRead r : {SliceRead::kAuto, SliceRead::kRuns, SliceRead::kSpan}) {
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

}  // namespace loadplan::simulator::timing
