// The Backend interface: one method per plan step. The memory simulator, the host (CPU)
// backend and the CUDA backend implement it; backend/executor.h walks a plan over any of them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::backend {

// The outcome of an operation: base::Status (what, where, how much). No exceptions cross
// the interface.
using Status = base::Status;

// Where a call comes from in the plan: the step's index and its wait edges (indices of
// earlier steps). A sequential backend ignores it; an asynchronous one records an event per
// step and makes each step wait for the events of `waits`. Backends never re-derive edges.
struct StepContext {
  uint32_t index = 0;
  std::span<const uint32_t> waits;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The resident pool (weights + carries), `bytes` already rounded to the granularity.
  [[nodiscard]] virtual Status AllocateResident(uint64_t bytes, const StepContext& at) = 0;
  // The staging arena, `bytes` already rounded (may be 0 when nothing is staged).
  [[nodiscard]] virtual Status AllocateArena(uint64_t bytes, const StepContext& at) = 0;
  // Copy `buffer`'s checkpoint tensor into its place: a weight at buffer.offset in the
  // pool, a source at buffer.offset in the arena. `lane` is the plan's load stream.
  [[nodiscard]] virtual Status Fill(const simulator::PlannedBuffer& buffer, uint32_t lane,
                                    const StepContext& at) = 0;
  // Run derive call `call` (index `index` on the plan's clock).
  [[nodiscard]] virtual Status Launch(const simulator::PlannedCall& call, uint32_t index,
                                      const StepContext& at) = 0;
  // A source's window ended: its arena bytes may be reused by later fills.
  [[nodiscard]] virtual Status Release(const simulator::PlannedBuffer& buffer,
                                       const StepContext& at) = 0;
  // The arena goes back to the device after the last derive call.
  [[nodiscard]] virtual Status FreeArena(const StepContext& at) = 0;
  // Cleanup after a failed execution: frees the resident pool (never called on success:
  // the pool lives as long as the model).
  [[nodiscard]] virtual Status FreeResident() = 0;

  // Device bytes allocated now, and the most ever allocated at once (the peak).
  [[nodiscard]] virtual uint64_t LiveBytes() const = 0;
  [[nodiscard]] virtual uint64_t PeakBytes() const = 0;
};

}  // namespace loadplan::backend
