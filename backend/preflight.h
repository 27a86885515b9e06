// Before a byte moves: the plan's calls against the kernel registry (CheckContracts) and its
// tensor bindings against the checkpoint (CheckBindings), every mismatch at once. Both real
// backends run it before their first allocation.
#pragma once

#include <string>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::backend {

// Ok when the plan can run on this checkpoint; else one kInvalidInput status listing every
// problem, one per line: bindings first, then contracts.
[[nodiscard]] base::Status Preflight(const simulator::LoadPlan& plan, const Checkpoint& checkpoint);

}  // namespace loadplan::backend
