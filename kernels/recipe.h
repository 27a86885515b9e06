// Index mappings of the MXFP4 expert prep (gpt-oss; docs/kernels.md "The MXFP4 recipe
// specification"), composed into one gather per output row, for the CUDA kernels and the tests.
//
// The CPU reference (reference.cc) deliberately does NOT use these functions: it
// performs the recipe's steps literally (take, pad, stack, interleave, shuffle,
// swizzle), so CUDA == CPU bit for bit also proves this composition right.
//
// Plain C++20 with no library includes beyond <cstdint>: nvcc compiles it.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define LOADPLAN_HD __host__ __device__
#else
#define LOADPLAN_HD
#endif

namespace loadplan::kernels {

// "No source row: this output row is padding (zeros)". Device code has no
// std::optional, so the gather functions return this named value.
inline constexpr int32_t kPadRow = -1;

// The 32-row block shuffle in gather form: dst[32q + d] = src[32q + 4(d % 8) + d / 8].
LOADPLAN_HD inline int32_t BlockShuffleSource(int32_t r) {
  const int32_t d = r & 31;
  return (r - d) + 4 * (d & 7) + (d >> 3);
}

// fc1: output row r of 2*i_pad (per expert) -> checkpoint row on the 2I axis.
// After the shuffle, r reads row s of the interleaved matrix; interleaved row
// 2i is up i (checkpoint row 2i+1), row 2i+1 is gate i (checkpoint row 2i);
// i >= I = rows/2 is padding. `rows` (= 2I) is even.
LOADPLAN_HD inline int32_t Fc1SourceRow(int32_t r, int32_t rows) {
  const int32_t s = BlockShuffleSource(r);
  const int32_t i = s >> 1;
  if (2 * i + 1 >= rows) return kPadRow;
  return (s & 1) != 0 ? 2 * i : 2 * i + 1;
}

// fc2: output row r of h_pad -> checkpoint row (of H = rows), or padding.
LOADPLAN_HD inline int32_t Fc2SourceRow(int32_t r, int32_t rows) {
  const int32_t s = BlockShuffleSource(r);
  return s < rows ? s : kPadRow;
}

LOADPLAN_HD inline int32_t SourceRow(bool fc1, int32_t r, int32_t rows) {
  return fc1 ? Fc1SourceRow(r, rows) : Fc2SourceRow(r, rows);
}

// The 128x4 swizzle of an [M, K] scale matrix (M % 128 == 0, K % 4 == 0):
// byte (r, k), r = 128a + 32b + c, k = 4d + e, goes to
// ((a*(K/4) + d)*32 + c)*16 + 4b + e. Tiles of 512 bytes, each 16-byte chunk
// (a, d, c) holding rows c, c+32, c+64, c+96 of band a, bytes 4d..4d+3 of each.
LOADPLAN_HD inline int64_t SwizzleOffset(int32_t r, int32_t k, int32_t K) {
  const int64_t a = r >> 7, b = (r >> 5) & 3, c = r & 31, d = k >> 2, e = k & 3;
  return ((a * (K >> 2) + d) * 32 + c) * 16 + 4 * b + e;
}

// BF16 bits of FP4 (E2M1) element `nib` times 2^(s - 127) for any s in 0..255, exactly,
// then rounded to BF16: the E2M1 magnitude m = (1 + f/2) * 2^k is exact in BF16, so only
// the biased exponent k + s decides normal, subnormal (k + s in {-1, 0}) or infinity
// (>= 255). This is torch.ldexp's result (measured on torch 2.11 CUDA and 2.15 CPU: no
// intermediate overflow, 0.5 * 2^128 = 2^127, 0 * 2^128 = 0), so mxfp4_experts_bf16 uses it
// as is.
LOADPLAN_HD inline uint32_t Mxfp4TorchBf16Bits(uint32_t nib, uint32_t s) {
  const uint32_t sign = (nib & 8u) << 12, mag = nib & 7u;
  if (mag == 0) return sign;
  const int k = static_cast<int>(mag >> 1) - 1;
  const uint32_t f = (mag > 1 && (mag & 1u) != 0) ? 1u : 0u;
  const int be = k + static_cast<int>(s);
  if (be >= 255) return sign | 0x7F80u;
  if (be >= 1) return sign | (static_cast<uint32_t>(be) << 7) | (f << 6);
  return sign | ((2u + f) << (be + 5));
}

// mxfp4_dequant's element (the OCP MX reading): as Mxfp4TorchBf16Bits, except that the
// scale 0xFF is NaN, so every element of its group is NaN 0x7FC0. (The CPU reference
// computes the same value in double arithmetic instead.)
LOADPLAN_HD inline uint32_t Mxfp4ToBf16Bits(uint32_t nib, uint32_t s) {
  return s == 0xFF ? 0x7FC0u : Mxfp4TorchBf16Bits(nib, s);
}

// The same bits with fewer operations, for the CUDA inner loop: for 2 <= s <= 252 no
// product is subnormal, infinite or NaN, so the bits are the E2M1 magnitude's BF16 bits
// (0.5 = 0x3F00, then 0x40 per code from 1 = 0x3F80 to 6 = 0x40C0) plus s - 127 in the
// exponent field. `base` = Mxfp4FastBase(s), once per group; only where Mxfp4FastScale(s).
LOADPLAN_HD inline bool Mxfp4FastScale(uint32_t s) { return s - 2u <= 250u; }
LOADPLAN_HD inline uint32_t Mxfp4FastBase(uint32_t s) { return 0x3F00u + (s << 7) - (127u << 7); }
LOADPLAN_HD inline uint32_t Mxfp4FastBf16Bits(uint32_t nib, uint32_t base) {
  const uint32_t mag = nib & 7u, sign = (nib & 8u) << 12;
  const uint32_t v = base + (mag << 6) - (mag == 1u ? 0x40u : 0u);
  return (mag == 0u ? 0u : v) | sign;
}

}  // namespace loadplan::kernels
