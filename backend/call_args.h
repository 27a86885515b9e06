// Binding a planned derive call to concrete memory: the manifest call's arguments
// become kernels::KernelArgs (buffer params -> the planned buffer's bytes at a
// backend-given base address; scalar params -> their values). Shared by the host
// and CUDA backends so both run exactly the same calls. Also the contract check:
// a backend runs a manifest kernel only if the registry has it with the same contract.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/args.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::backend {

struct BoundCall {
  std::string kernel;
  kernels::KernelArgs args;
  // (param, plan buffer index, access) for every buffer param, for shadow checks.
  struct Use {
    std::string param;
    uint32_t buffer = 0;
    verifier::Access access = verifier::Access::kRead;
    uint64_t extent_bytes = 0;  // bytes the param's extent touches (prefix of the buffer)
  };
  std::vector<Use> uses;
  std::string error;  // empty on success
};

// `address(buffer index)` gives the first byte of the planned buffer (host or device).
BoundCall BindCall(const verifier::Manifest& m, const simulator::LoadPlan& plan, const simulator::PlannedCall& call,
                   const std::function<uint8_t*(uint32_t)>& address);

// Every kernel that a derive call of the plan launches must be in the kernel registry
// (kernels::FindKernel) with the same parameters, access, dtype and extent; one message per mismatch. A model
// out of name order (verifier::IsSortedModel false) is refused with one message: the
// plan's indices follow the sorted model and the lookups would miss.
std::vector<std::string> CheckContracts(const verifier::Manifest& m, const simulator::LoadPlan& plan);

}  // namespace loadplan::backend
