// The executor: walks a plan's steps in order over any Backend, stopping at the first error.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/backend.h"
#include "simulator/plan.h"

namespace loadplan::backend {

struct ExecuteResult {
  Status status;            // ok, or the first error ("step 12 (fill l0.raw): ...")
  uint32_t steps_done = 0;  // steps that completed
  std::optional<simulator::StepIndex> failed_step;  // the step that failed (none when Finish did)
  Status cleanup;  // outcome of the cleanup after a failure (ok otherwise)
};

// Runs plan.steps[0..] in order (sequentially; an asynchronous backend follows the wait
// edges it is handed), then Backend::Finish: a successful result means every step is complete.
// Before a step runs, its ids are checked (buffer, call, lane and waits in range, waits
// pointing backwards, a buffer's or call's id equal to its position); a bad id is an error,
// never UB. After the first error (Finish's included), frees what the run allocated: the
// arena if it is still held, then the pool.
// O(steps + total waits).
ExecuteResult Execute(const simulator::LoadPlan& plan, Backend& backend);

}  // namespace loadplan::backend
