// A plan's checkpoint bindings (`tensor`, or a `tensors` list read one after another) against a
// checkpoint: the preflight's check of every binding, and the parts one fill reads.
#pragma once

#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "base/slice_runs.h"
#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::backend {

// Every `tensor` and `tensors` binding of the plan against the checkpoint: missing tensors,
// dtype mismatches, and a shape mismatch (`tensor`) or byte sizes that do not sum to the
// buffer's (`tensors`), all reported at once ("buffer l0.q (/buffers/l0.q): tensor
// model.layers.0.q.weight has dtype F16 in shard-1.safetensors, the manifest says BF16").
// Shapes of bound buffers are variable-free (rule K5), so the plan holds them exactly.
// Ok, or one kInvalidInput status listing every problem, one per line, in buffer order.
[[nodiscard]] base::Status CheckBindings(const simulator::LoadPlan& plan, const Checkpoint& ckpt);

// One tensor a fill reads, and which bytes of it: every byte (one run) or a slice's runs.
struct FillPart {
  Checkpoint::Located at;
  base::SliceRuns runs;  // offsets within the tensor's data
};

// The checkpoint tensors a fill of `b` reads (simulator::BoundTensors), located, in read
// order, with the runs read of each (a slice's, else the whole tensor): each present and of
// the buffer's dtype, a slice inside its tensor with the buffer's shape, the runs' bytes
// summing to the buffer's bytes. Else kInvalidInput naming the first tensor at fault ("tensor
// t is not in the checkpoint"); the caller names the buffer. O(tensors x log checkpoint
// tensors).
[[nodiscard]] base::Result<std::vector<FillPart>> LocateFill(const simulator::PlannedBuffer& b,
                                                             const Checkpoint& ckpt);

}  // namespace loadplan::backend
