// A manifest's kernel declaration against the registry kernel of the same name
// (kernels/registry/registry.h). One comparison with two users: rule P9 at `check`
// time and the backends' refusal at `run` time (backend::CheckContracts), so a
// manifest that checks clean is never refused for its contracts.
#pragma once

#include <string>
#include <vector>

#include "kernels/registry/registry.h"
#include "verifier/manifest.h"

namespace loadplan::verifier {

struct ContractMismatch {
  std::string ptr;      // the parameter, its access/dtype/extent, or the kernel's "params"
  std::string message;  // names the kernel, the parameter and both spellings
  bool operator==(const ContractMismatch&) const = default;
};

// Every difference between `k` and `spec` (parameters, access, dtype, extent as an
// expression tree), in parameter-name order; empty when they match exactly.
std::vector<ContractMismatch> CompareWithRegistry(const Kernel& k, const kernels::KernelSpec& spec);

// The registry's contract as a manifest kernel (pointers unset): what to declare.
Kernel RegistryKernel(const kernels::KernelSpec& spec);

}  // namespace loadplan::verifier
