// Comparing kernel declarations with the kernel registry (see registry_contract.h).
#include "verifier/registry_contract.h"

#include <fmt/format.h>

#include "verifier/diag.h"

namespace loadplan::verifier {
namespace {

std::string Describe(Access access, const std::optional<base::Dtype>& dtype,
                     const std::optional<Expr>& extent) {
  if (access == Access::kScalar) return "scalar";
  return fmt::format("{} {} extent `{}`", AccessName(access),
                     dtype ? base::DtypeName(*dtype) : "(no dtype)",
                     extent ? ToString(*extent) : "(none)");
}

// The first field of `p` that differs from `want` (its pointer), or nullopt.
std::optional<std::string> DifferingField(const Param& p, const kernels::ParamSpec& want) {
  const bool scalar = p.access == Access::kScalar, want_scalar = want.access == Access::kScalar;
  if (scalar != want_scalar) return p.ptr;
  if (scalar) return std::nullopt;
  if (p.access != want.access) return ChildPointer(p.ptr, "access");
  if (p.dtype != want.dtype) return ChildPointer(p.ptr, "dtype");
  if (p.extent != want.extent) return ChildPointer(p.ptr, "extent");
  return std::nullopt;
}

}  // namespace

std::vector<ContractMismatch> CompareWithRegistry(const Kernel& k,
                                                  const kernels::KernelSpec& spec) {
  std::vector<ContractMismatch> out;
  for (const kernels::ParamSpec& want : spec.params) {
    if (FindParam(k, want.name) != nullptr) continue;
    out.push_back(
        {ChildPointer(k.ptr, "params"),
         fmt::format("kernel `{}` declares no parameter `{}`; the registry kernel's is {}", k.name,
                     want.name, Describe(want.access, want.dtype, want.extent))});
  }
  for (const Param& p : k.params) {
    const kernels::ParamSpec* want = kernels::FindParam(spec, p.name);
    if (want == nullptr) {
      out.push_back(
          {p.ptr,
           fmt::format(
               "kernel `{}` declares parameter `{}`, which the registry kernel does not have",
               k.name, p.name)});
      continue;
    }
    if (std::optional<std::string> ptr = DifferingField(p, *want)) {
      out.push_back(
          {*ptr, fmt::format("parameter `{}` of kernel `{}` is {}; the registry kernel's is {}",
                             p.name, k.name, Describe(p.access, p.dtype, p.extent),
                             Describe(want->access, want->dtype, want->extent))});
    }
  }
  return out;
}

Kernel RegistryKernel(const kernels::KernelSpec& spec) {
  Kernel k{.name = spec.name};
  for (const kernels::ParamSpec& p : spec.params) {
    k.params.push_back(
        Param{.name = p.name, .access = p.access, .dtype = p.dtype, .extent = p.extent});
  }
  return k;
}

}  // namespace loadplan::verifier
