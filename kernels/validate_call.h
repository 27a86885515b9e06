// Validation of a derive-kernel call, shared by the CUDA launch and the CPU
// reference: the name is in the registry (kernels/registry/registry.h), the arguments
// bind exactly its parameters, its preconditions hold at the scalars, every extent
// (checked 64-bit arithmetic) fits its buffer, no read buffer overlaps dst.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/args.h"
#include "kernels/registry/registry.h"
#include "kernels/shape.h"

namespace loadplan::kernels {

struct ResolvedCall {
  KernelId kernel = KernelId::kCopy;
  const void* src = nullptr;     // the mxfp4 dequant kernels: `blocks`
  const void* scales = nullptr;  // mxfp4_dequant, mxfp4_experts_bf16, fp8_block_bf16
  void* dst = nullptr;
  RowShape shape;          // the mxfp4_fc* kernels
  int64_t n = 0;           // copy, cast_bf16_f32: elements
  int64_t experts = 0;     // mxfp4_experts_bf16
  int64_t rows = 0;        // mxfp4_dequant, mxfp4_experts_bf16, fp8_block_bf16
  int64_t cols = 0;        // the same three (mxfp4: a multiple of 32)
  int64_t block_rows = 0;  // fp8_block_bf16: rows and columns one scale covers (>= 1)
  int64_t block_cols = 0;
  uint64_t src_bytes = 0;  // bytes read (the src / blocks extent)
  uint64_t scales_bytes = 0;
  uint64_t dst_bytes = 0;  // bytes written (the dst extent)
};

struct Resolution {
  std::optional<ResolvedCall> call;  // set iff status.ok()
  Status status = Status::Ok();
};

// The limits (experts <= 65535, pads multiples of 128, rows and row bytes < 2^31, ...)
// are the registry's preconditions; a refusal names the first one that fails.
Resolution Resolve(std::string_view name, const KernelArgs& args);

}  // namespace loadplan::kernels
