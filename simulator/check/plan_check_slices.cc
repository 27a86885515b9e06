// The plan checker on slices (issue 30): a planned buffer binds the manifest's slice, and the
// runs a fill of it reads (base::RunsOfSlice over the buffer's shape, the slice's dimension at
// its end) cover the buffer exactly: as many as FillRuns says, their bytes the buffer's bytes.
// Computed from the slice on its own, apart from the planner and the backends.
#include <vector>

#include "base/slice_runs.h"
#include "simulator/check/plan_check_internal.h"

namespace loadplan::simulator::checkdetail {

void CheckSlices(Ctx& c) {
  for (size_t i = 0; i < c.m.buffers.size() && i < c.plan.buffers.size(); ++i) {
    const verifier::Buffer& mb = c.m.buffers[i];
    const PlannedBuffer& pb = c.plan.buffers[i];
    if (pb.slice != mb.slice) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: its slice differs from the manifest's",
            mb.name);
      continue;
    }
    if (!pb.slice || !pb.shape) continue;
    const verifier::TensorSlice& s = *pb.slice;
    if (s.dim >= pb.shape->size() || (*pb.shape)[s.dim] != s.length) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: shape does not hold its slice's {} elements",
            mb.name, s.length);
      continue;
    }
    // Its tensor (the extent there), or the smallest the slice fits: every run's length and
    // count are the same in any.
    std::vector<uint64_t> tensor = *pb.shape;
    tensor[s.dim] = s.extent.value_or(s.start + s.length);
    const base::Result<base::SliceRuns> runs =
        base::RunsOfSlice(tensor, pb.dtype, s.dim, s.start, s.length);
    if (!runs.ok()) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: {}", mb.name, runs.status().message());
    } else if (runs->bytes() != pb.bytes || runs->count != FillRuns(pb)) {
      c.Add(PlanViolationKind::kBuffers,
            "buffer {}: its slice's {} runs of {} bytes do not cover its {} bytes in {} fills",
            mb.name, runs->count, runs->run_bytes, pb.bytes, FillRuns(pb));
    }
  }
}

}  // namespace loadplan::simulator::checkdetail
