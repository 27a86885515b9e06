// Totals over a LoadPlan that the planner's callers, the backends and the reports share.
// Header-only: the plan checker uses them without linking the planner.
#pragma once

#include <cstdint>
#include <vector>

#include "base/bytes.h"
#include "simulator/plan.h"

namespace loadplan::simulator {

// Bytes the plan fills from the checkpoint (every kFill step's buffer), saturating.
inline uint64_t FillBytes(const LoadPlan& plan) {
  uint64_t total = 0;
  for (const Step& s : plan.steps) {
    if (s.kind == StepKind::kFill && s.buffer && Index(*s.buffer) < plan.buffers.size()) {
      total = base::AddSat(total, plan.buffer(*s.buffer).bytes);
    }
  }
  return total;
}

// Carries written by derive calls, in name order.
inline std::vector<BufferId> DerivedCarries(const LoadPlan& plan) {
  std::vector<bool> written(plan.buffers.size(), false);
  for (const PlannedCall& c : plan.calls) {
    for (BufferId w : c.writes) {
      if (Index(w) < written.size()) written[Index(w)] = true;
    }
  }
  std::vector<BufferId> out;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.kind == verifier::BufferKind::kCarry && written[Index(b.id)]) out.push_back(b.id);
  }
  return out;
}

// Weights the plan keeps resident, in name order.
inline std::vector<BufferId> ResidentWeights(const LoadPlan& plan) {
  std::vector<BufferId> out;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.kind == verifier::BufferKind::kWeight && b.residence == Residence::kResident)
      out.push_back(b.id);
  }
  return out;
}

// The load peak the plan predicts: the resident pool plus the arena, both rounded.
inline uint64_t LoadPeakBytes(const LoadPlan& plan) {
  return base::AddSat(plan.resident_bytes_rounded, plan.arena_bytes_rounded);
}

}  // namespace loadplan::simulator
