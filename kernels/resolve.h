// Validation of a derive-kernel call, shared by the CUDA launch and the CPU
// reference: the name is registered, the arguments bind exactly the contract's
// parameters, scalars are in range, pads are multiples of 128, every extent
// (checked 64-bit arithmetic) fits its buffer, src and dst do not overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/args.h"
#include "kernels/shape.h"

namespace loadplan::kernels {

enum class Op : uint8_t {
  kFc1Weight, kFc1Scales, kFc1Bias, kFc2Weight, kFc2Scales, kFc2Bias, kCopy, kCast, kDequant
};

struct ResolvedCall {
  Op op = Op::kCopy;
  const void* src = nullptr;     // mxfp4_dequant: `blocks`
  const void* scales = nullptr;  // mxfp4_dequant only
  void* dst = nullptr;
  RowShape shape;          // the mxfp4_fc* kernels
  int64_t n = 0;           // copy, cast_bf16_f32: elements; mxfp4_dequant: rows
  int64_t cols = 0;        // mxfp4_dequant: elements per row (a multiple of 32)
  uint64_t src_bytes = 0;  // bytes read (the src / blocks extent)
  uint64_t scales_bytes = 0;
  uint64_t dst_bytes = 0;  // bytes written (the dst extent)
};

struct Resolution {
  std::optional<ResolvedCall> call;  // set iff status.ok()
  Status status = Status::Ok();
};

// Limits: experts <= 65535 (a CUDA grid dimension), per-expert rows and columns
// < 2^31, pads multiples of 128 (the 128x4 swizzle and the 32-row shuffle).
Resolution Resolve(std::string_view name, const KernelArgs& args);

}  // namespace loadplan::kernels
