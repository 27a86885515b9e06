// Host-side dispatch of derive kernels, by registry KernelId, to their CUDA launchers (derive.cu).
#include "kernels/launch.h"

#include <cstdint>
#include <string>

#include "kernels/device_launch.h"

namespace loadplan::kernels {
namespace {

// BF16 and F32 buffers must be element-aligned on the device.
Status CheckAlignment(const ResolvedCall& c) {
  const bool bf16_out = c.kernel == KernelId::kMxfp4Dequant ||
                        c.kernel == KernelId::kMxfp4ExpertsBf16 ||
                        c.kernel == KernelId::kFp8BlockBf16;
  if (bf16_out && reinterpret_cast<uintptr_t>(c.dst) % 2 != 0) {
    return Status::Error(std::string(KernelName(c.kernel)) + ": dst must be 2-byte aligned");
  }
  if (c.kernel == KernelId::kFp8BlockBf16 && reinterpret_cast<uintptr_t>(c.scales) % 4 != 0) {
    return Status::Error("fp8_block_bf16: scales must be 4-byte aligned");
  }
  const bool widening = c.kernel == KernelId::kMxfp4Fc1Bias ||
                        c.kernel == KernelId::kMxfp4Fc2Bias || c.kernel == KernelId::kCastBf16F32;
  if (!widening) return Status::Ok();
  if (reinterpret_cast<uintptr_t>(c.src) % 2 != 0 || reinterpret_cast<uintptr_t>(c.dst) % 4 != 0) {
    return Status::Error(std::string(KernelName(c.kernel)) +
                         ": src must be 2-byte and dst 4-byte aligned");
  }
  return Status::Ok();
}

// One arm per registry kernel (exhaustive: a new KernelId does not compile without one).
Status Dispatch(const ResolvedCall& c, void* stream) {
  switch (c.kernel) {
    case KernelId::kMxfp4Fc1Weight:
    case KernelId::kMxfp4Fc2Weight: return device::LaunchRowGather(c.src, c.dst, c.shape, stream);
    case KernelId::kMxfp4Fc1Scales:
    case KernelId::kMxfp4Fc2Scales:
      return device::LaunchScaleSwizzle(c.src, c.dst, c.shape, stream);
    case KernelId::kMxfp4Fc1Bias:
    case KernelId::kMxfp4Fc2Bias: return device::LaunchBias(c.src, c.dst, c.shape, stream);
    case KernelId::kCopy: return device::LaunchCopy(c.src, c.dst, c.n, stream);
    case KernelId::kCastBf16F32: return device::LaunchCast(c.src, c.dst, c.n, stream);
    case KernelId::kMxfp4Dequant:
      return device::LaunchDequant(c.src, c.scales, c.dst, c.rows * c.cols / 2, stream);
    case KernelId::kMxfp4ExpertsBf16:
      return device::LaunchExpertsBf16(c.src, c.scales, c.dst, c.experts, c.rows, c.cols, stream);
    case KernelId::kFp8BlockBf16:
      return device::LaunchFp8BlockBf16(
          c.src, c.scales, c.dst,
          {.rows = c.rows, .cols = c.cols, .block_rows = c.block_rows, .block_cols = c.block_cols},
          stream);
  }
  return Status::Error("no launcher for this kernel", base::ErrorKind::kInternal);
}

}  // namespace

Status LaunchResolved(const ResolvedCall& call, void* stream) {
  if (Status s = CheckAlignment(call); !s.ok()) return s;
  return Dispatch(call, stream).WithContext(KernelName(call.kernel));
}

Status LaunchDerive(std::string_view name, const KernelArgs& args, void* stream) {
  Resolution r = Resolve(name, args);
  if (!r.status.ok()) return r.status;
  return LaunchResolved(*r.call, stream);
}

}  // namespace loadplan::kernels
