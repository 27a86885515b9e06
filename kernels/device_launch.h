// The CUDA launchers of the derive kernels (derive.cu), declared without CUDA
// types so host code in .cc files needs no CUDA headers: a stream is a
// cudaStream_t passed as void* (nullptr: the legacy default stream), and an
// error is a base::Status of kind kDevice naming the CUDA error. Callers validate first
// (validate_call.h): these trust their arguments. All launches are asynchronous.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/shape.h"

namespace loadplan::kernels::device {

// Weights: one gather per output row, 16-byte items when pointers and row
// lengths allow (4- or 1-byte items otherwise).
base::Status LaunchRowGather(const void* src, void* dst, const RowShape& s, void* stream);
// Scales: rows as for weights, then the 128x4 swizzle; one block per 128-row band.
base::Status LaunchScaleSwizzle(const void* src, void* dst, const RowShape& s, void* stream);
// Biases: BF16 rows -> F32, permuted and padded like the weights' rows.
// src 2-byte aligned, dst 4-byte aligned.
base::Status LaunchBias(const void* src, void* dst, const RowShape& s, void* stream);
base::Status LaunchCopy(const void* src, void* dst, int64_t n, void* stream);
// src 2-byte aligned, dst 4-byte aligned.
base::Status LaunchCast(const void* src, void* dst, int64_t n, void* stream);

// MXFP4 -> BF16 (bits as reference.cc's DequantOne); pairs = rows*cols/2,
// a multiple of 16. dst 2-byte aligned.
base::Status LaunchDequant(const void* blocks, const void* scales, void* dst, int64_t pairs,
                           void* stream);

// MXFP4 experts -> BF16 in transformers' layout (bits as recipe.h's Mxfp4TorchBf16Bits):
// blocks [experts, rows, cols/2], scales [experts, rows, cols/32] -> dst [experts, cols, rows].
// cols % 32 == 0, experts <= 65535, rows * cols < 2^31. dst 2-byte aligned.
base::Status LaunchExpertsBf16(const void* blocks, const void* scales, void* dst, int64_t experts,
                               int64_t rows, int64_t cols, void* stream);

struct Fp8BlockShape {
  int64_t rows = 0, cols = 0;  // rows * cols < 2^31
  int64_t block_rows = 1, block_cols = 1;
};
// FP8 E4M3FN [rows, cols] times F32 block scales -> BF16 (bits as reference.cc's
// Fp8BlockBf16; NaN 0x7FFF). scales 4-byte, dst 2-byte aligned.
base::Status LaunchFp8BlockBf16(const void* src, const void* scales, void* dst,
                                const Fp8BlockShape& s, void* stream);

}  // namespace loadplan::kernels::device
