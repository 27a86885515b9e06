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

// Where a call comes from in the plan: the step's index and its wait edges (earlier steps).
// A sequential backend ignores it; an asynchronous one records an event per step and makes
// each step wait for the events of `waits`. Backends never re-derive edges. `waits` points
// into the plan and is valid only during the call.
struct StepContext {
  simulator::StepIndex index{};
  std::span<const simulator::StepIndex> waits;
};

// Backends take plan buffers and calls as the plan holds them: a PlannedBuffer carries its
// id, tensor, dtype, shape and place; a PlannedCall its id (= its time on the clock), kernel,
// scalars and buffer arguments. No backend looks anything up in a manifest.
class Backend {
 public:
  virtual ~Backend() = default;

  // The resident pool (weights + carries), `bytes` already rounded to the granularity.
  [[nodiscard]] virtual Status AllocateResident(uint64_t bytes, const StepContext& at) = 0;
  // The staging arena, `bytes` already rounded (may be 0 when nothing is staged).
  [[nodiscard]] virtual Status AllocateArena(uint64_t bytes, const StepContext& at) = 0;
  // Copy `buffer`'s checkpoint tensor into its place: a weight at buffer.offset in the
  // pool, a source at buffer.offset in the arena. `lane` is the plan's load stream.
  [[nodiscard]] virtual Status Fill(const simulator::PlannedBuffer& buffer, simulator::Lane lane,
                                    const StepContext& at) = 0;
  // Run derive call `call` (at clock time TimeOf(call.id)).
  [[nodiscard]] virtual Status Launch(const simulator::PlannedCall& call,
                                      const StepContext& at) = 0;
  // A source's window ended: its arena bytes may be reused by later fills.
  [[nodiscard]] virtual Status Release(const simulator::PlannedBuffer& buffer,
                                       const StepContext& at) = 0;
  // The arena goes back to the device after the last derive call.
  [[nodiscard]] virtual Status FreeArena(const StepContext& at) = 0;
  // Waits until every step handed over so far is complete and returns the first error an
  // asynchronous step reported (a read, a copy, a kernel). The executor calls it after the
  // last step, so a successful Execute means the load is done, on any backend. A synchronous
  // backend has nothing to wait for.
  [[nodiscard]] virtual Status Finish() = 0;
  // Cleanup after a failed execution: frees the resident pool (never called on success:
  // the pool lives as long as the model).
  [[nodiscard]] virtual Status FreeResident() = 0;

  // Device bytes allocated now, and the most ever allocated at once (the peak).
  [[nodiscard]] virtual uint64_t LiveBytes() const = 0;
  [[nodiscard]] virtual uint64_t PeakBytes() const = 0;
};

}  // namespace loadplan::backend
