// The registry of derive kernels this library implements, with each kernel's
// contract in the manifest's own spelling. A backend runs a manifest kernel only
// if the registry has that name with the same contract (DESIGN.md "Kernel
// contracts"): a manifest cannot make it touch bytes its implementation does not.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace loadplan::kernels {

// One parameter. Buffer parameters: access "read" | "write" | "readwrite", a
// safetensors dtype name and the extent (elements of that dtype) as an
// expression over the kernel's scalar parameters. Scalars: access "scalar",
// empty dtype and extent.
struct ParamContract {
  std::string name;
  std::string access;
  std::string dtype;
  std::string extent;
  bool operator==(const ParamContract&) const = default;
};

struct KernelContract {
  std::string name;
  std::vector<ParamContract> params;  // sorted by name
  bool operator==(const KernelContract&) const = default;
};

// Every kernel, sorted by name: cast_bf16_f32, copy, mxfp4_dequant,
// mxfp4_fc1_bias, mxfp4_fc1_scales, mxfp4_fc1_weight, mxfp4_fc2_bias,
// mxfp4_fc2_scales, mxfp4_fc2_weight (the derive kernels of
// examples/kernels.h's standard contracts).
const std::vector<KernelContract>& Contracts();
// The contract of `name`, or nullptr when this library has no such kernel.
const KernelContract* FindContract(std::string_view name);
// The contract's parameter `param`, or nullptr.
const ParamContract* FindParam(const KernelContract& k, std::string_view param);

}  // namespace loadplan::kernels
