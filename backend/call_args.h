// Binding a planned derive call to concrete memory: the call's buffer arguments become
// kernels::KernelArgs (the planned buffer's bytes at a backend-given base address) and its
// scalars their values, straight from the plan (no manifest lookups). Shared by the host and
// CUDA backends so both run exactly the same calls. Also the contract check: a backend runs a
// call only if the kernel registry has its kernel and the call binds exactly the registry's
// parameters, with the registry's access and dtype and the bytes its extent gives.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/args.h"
#include "simulator/plan.h"

namespace loadplan::backend {

// `address(buffer)` gives the first byte of the planned buffer (host or device), nullptr when
// it is not held: an error naming the call, param and buffer.
base::Result<kernels::KernelArgs> BindCall(
    const simulator::LoadPlan& plan, const simulator::PlannedCall& call,
    const std::function<uint8_t*(simulator::BufferId)>& address);

// Every call of the plan against the registry: ok when all are ours, else one kInvalidInput
// status with one line per mismatch, in call order.
[[nodiscard]] base::Status CheckContracts(const simulator::LoadPlan& plan);

}  // namespace loadplan::backend
