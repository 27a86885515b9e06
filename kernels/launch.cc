// Host-side dispatch of derive kernels to their CUDA launchers (derive.cu).
#include "kernels/launch.h"

#include <cstdint>
#include <string>

#include "kernels/device_launch.h"

namespace loadplan::kernels {
namespace {

const char* OpName(Op op) {
  switch (op) {
    case Op::kFc1Weight: return "mxfp4_fc1_weight";
    case Op::kFc1Scales: return "mxfp4_fc1_scales";
    case Op::kFc1Bias: return "mxfp4_fc1_bias";
    case Op::kFc2Weight: return "mxfp4_fc2_weight";
    case Op::kFc2Scales: return "mxfp4_fc2_scales";
    case Op::kFc2Bias: return "mxfp4_fc2_bias";
    case Op::kCopy: return "copy";
    case Op::kCast: return "cast_bf16_f32";
    case Op::kDequant: return "mxfp4_dequant";
  }
  return "?";
}

// BF16 sources and F32 destinations must be element-aligned on the device.
Status CheckAlignment(const ResolvedCall& c) {
  if (c.op == Op::kDequant && reinterpret_cast<uintptr_t>(c.dst) % 2 != 0) {
    return Status::Error("mxfp4_dequant: dst must be 2-byte aligned");
  }
  const bool widening = c.op == Op::kFc1Bias || c.op == Op::kFc2Bias || c.op == Op::kCast;
  if (!widening) return Status::Ok();
  if (reinterpret_cast<uintptr_t>(c.src) % 2 != 0 || reinterpret_cast<uintptr_t>(c.dst) % 4 != 0) {
    return Status::Error(std::string(OpName(c.op)) + ": src must be 2-byte and dst 4-byte aligned");
  }
  return Status::Ok();
}

int Dispatch(const ResolvedCall& c, void* stream) {
  switch (c.op) {
    case Op::kFc1Weight:
    case Op::kFc2Weight: return device::LaunchRowGather(c.src, c.dst, c.shape, stream);
    case Op::kFc1Scales:
    case Op::kFc2Scales: return device::LaunchScaleSwizzle(c.src, c.dst, c.shape, stream);
    case Op::kFc1Bias:
    case Op::kFc2Bias: return device::LaunchBias(c.src, c.dst, c.shape, stream);
    case Op::kCopy: return device::LaunchCopy(c.src, c.dst, c.n, stream);
    case Op::kCast: return device::LaunchCast(c.src, c.dst, c.n, stream);
    case Op::kDequant: return device::LaunchDequant(c.src, c.scales, c.dst, c.n * c.cols / 2, stream);
  }
  return 1;  // cudaErrorInvalidValue
}

}  // namespace

Status LaunchResolved(const ResolvedCall& call, void* stream) {
  if (Status s = CheckAlignment(call); !s.ok()) return s;
  const int err = Dispatch(call, stream);
  if (err == 0) return Status::Ok();
  return Status::Error(std::string(OpName(call.op)) + ": launch failed: " + device::ErrorName(err) + " (" +
                       device::ErrorString(err) + ")");
}

Status LaunchDerive(std::string_view name, const KernelArgs& args, void* stream) {
  Resolution r = Resolve(name, args);
  if (!r.status.ok()) return r.status;
  return LaunchResolved(*r.call, stream);
}

}  // namespace loadplan::kernels
