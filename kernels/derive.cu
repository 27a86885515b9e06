// CUDA derive kernels: the MXFP4 expert prep as single-pass gathers (recipe.h),
// BF16 -> F32 widening, copy, and the dequantizations to BF16. Memory bound: 16-byte accesses,
// coalesced.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/device_launch.h"
#include "kernels/recipe.h"

namespace loadplan::kernels::device {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;            // independent loads in flight per thread
constexpr int kItemsPerBlock = 2048;  // row gather: output items per block
constexpr int kBandRows = 128;        // scale swizzle: rows per block (one 128-row band)
constexpr int kMaxBandSmem = 48 * 1024;

// The launch's outcome (a launch error, or an earlier asynchronous one it surfaces) as a
// Status naming the CUDA error.
base::Status Checked(cudaError_t e) {
  if (e == cudaSuccess) return base::Status::Ok();
  return base::Status::Error(
      std::string("launch failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")",
      base::ErrorKind::kDevice);
}
base::Status Launched() { return Checked(cudaGetLastError()); }
cudaStream_t Stream(void* s) { return static_cast<cudaStream_t>(s); }
__host__ __device__ bool Aligned(const void* p, uintptr_t n) {
  return (reinterpret_cast<uintptr_t>(p) % n) == 0;
}

struct GatherParams {
  int32_t rows, out_rows, in_items, out_items, rows_per_block;
  bool fc1;
};

// Block (x, expert y) writes output rows [x*rows_per_block, +rows_per_block) of
// one expert, contiguous in dst; item j of row r reads item j of the source row
// (recipe.h), or zero for padding rows and columns.
template <typename Item>
__global__ void __launch_bounds__(kThreads)
    RowGatherKernel(const Item* __restrict__ src, Item* __restrict__ dst, GatherParams p) {
  const int64_t e = blockIdx.y;
  const int32_t r0 = blockIdx.x * p.rows_per_block;
  const uint32_t n = static_cast<uint32_t>(min(p.rows_per_block, p.out_rows - r0)) * p.out_items;
  const Item* s_exp = src + e * p.rows * static_cast<int64_t>(p.in_items);
  Item* d_blk = dst + (e * p.out_rows + r0) * static_cast<int64_t>(p.out_items);
  for (uint32_t base = threadIdx.x; base < n; base += kThreads * kUnroll) {
    Item v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint32_t i = base + u * kThreads;
      v[u] = Item{};
      if (i < n) {
        const uint32_t lr = i / p.out_items, j = i - lr * p.out_items;
        const int32_t s = SourceRow(p.fc1, r0 + static_cast<int32_t>(lr), p.rows);
        if (s != kPadRow && j < static_cast<uint32_t>(p.in_items))
          v[u] = __ldg(s_exp + int64_t{s} * p.in_items + j);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const uint32_t i = base + u * kThreads;
      if (i < n) d_blk[i] = v[u];
    }
  }
}

template <typename Item>
base::Status GatherAs(const void* src, void* dst, const RowShape& s, void* stream) {
  constexpr int32_t kB = sizeof(Item);
  const int32_t out_items = s.out_cols / kB;
  const int32_t rpb = std::min(s.out_rows, std::max(1, kItemsPerBlock / out_items));
  const GatherParams p{s.rows, s.out_rows, s.cols / kB, out_items, rpb, s.fc1};
  const dim3 grid((s.out_rows + rpb - 1) / rpb, s.experts);
  RowGatherKernel<Item><<<grid, kThreads, 0, Stream(stream)>>>(static_cast<const Item*>(src),
                                                               static_cast<Item*>(dst), p);
  return Launched();
}

// ---- scales: rows, then the 128x4 swizzle ----

struct BandParams {
  int32_t rows, cols, out_rows, K;
  bool fc1;
};

// Copies `nbytes` contiguous bytes into shared memory, 16 bytes at a time when aligned.
__device__ void LoadBand(const uint8_t* __restrict__ src, uint8_t* raw, int32_t nbytes) {
  int32_t done = 0;
  if (Aligned(src, 16)) {
    done = nbytes & ~15;
    for (int32_t i = threadIdx.x; i < nbytes >> 4; i += kThreads) {
      reinterpret_cast<uint4*>(raw)[i] = __ldg(reinterpret_cast<const uint4*>(src) + i);
    }
  }
  for (int32_t i = done + threadIdx.x; i < nbytes + 8; i += kThreads)
    raw[i] = i < nbytes ? src[i] : 0;
}

// Four bytes at any byte offset of shared memory (two aligned words, funnel shift).
__device__ uint32_t Read4(const uint8_t* raw, int32_t off) {
  const uint32_t* w = reinterpret_cast<const uint32_t*>(raw);
  return __funnelshift_r(w[off >> 2], w[(off >> 2) + 1], (off & 3) * 8);
}

// Block (band a, expert y): the band's output rows 128a..128a+127 read checkpoint
// rows in [128a, 128a+128) only (the shuffle stays in 32-row blocks, fc1's
// up/gate pairs in 2-row pairs), so the block stages those rows in shared memory
// with wide loads, then writes each 16-byte chunk (a, d, c): rows c + 32b,
// bytes 4d..4d+3.
template <bool kVecOut>
__global__ void __launch_bounds__(kThreads)
    ScaleBandKernel(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, BandParams p) {
  extern __shared__ uint4 smem[];
  uint8_t* raw = reinterpret_cast<uint8_t*>(smem);
  const int64_t e = blockIdx.y;
  const int32_t row0 = kBandRows * blockIdx.x;
  const int32_t nbytes = max(0, min(kBandRows, p.rows - row0)) * p.cols;
  LoadBand(src + (e * p.rows + row0) * static_cast<int64_t>(p.cols), raw, nbytes);
  __syncthreads();
  const int32_t c = threadIdx.x & 31;
  int32_t off[4];
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    const int32_t s = SourceRow(p.fc1, row0 + 32 * b + c, p.rows);
    off[b] = s == kPadRow ? -1 : (s - row0) * p.cols;
  }
  uint8_t* out = dst + (e * p.out_rows + row0) * static_cast<int64_t>(p.K);
  for (int32_t t = threadIdx.x; t < (p.K >> 2) * 32; t += kThreads) {
    const int32_t k = 4 * (t >> 5), valid = min(4, max(0, p.cols - k));
    const uint32_t mask = valid == 4 ? 0xFFFFFFFFu : (1u << (8 * valid)) - 1u;
    uint32_t w[4];
#pragma unroll
    for (int b = 0; b < 4; ++b)
      w[b] = (off[b] < 0 || valid == 0) ? 0u : (Read4(raw, off[b] + k) & mask);
    if constexpr (kVecOut) {
      reinterpret_cast<uint4*>(out)[t] = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
#pragma unroll
      for (int i = 0; i < 16; ++i)
        out[16 * t + i] = static_cast<uint8_t>(w[i >> 2] >> (8 * (i & 3)));
    }
  }
}

// Fallback for rows too long to stage: one thread per output byte.
__global__ void ScaleGenericKernel(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                   BandParams p, int64_t total) {
  const int64_t per_expert = int64_t{p.out_rows} * p.K;
  for (int64_t o = blockIdx.x * int64_t{kThreads} + threadIdx.x; o < total;
       o += int64_t{gridDim.x} * kThreads) {
    const int64_t e = o / per_expert, w = o % per_expert, tile = w / 512, in = w % 512;
    const int32_t r =
        static_cast<int32_t>(128 * (tile / (p.K / 4)) + 32 * ((in % 16) / 4) + in / 16);
    const int32_t k = static_cast<int32_t>(4 * (tile % (p.K / 4)) + in % 4);
    const int32_t s = SourceRow(p.fc1, r, p.rows);
    dst[o] = (s != kPadRow && k < p.cols) ? src[(e * p.rows + s) * p.cols + k] : 0;
  }
}

unsigned GridFor(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20));
}

// ---- biases and casts: BF16 -> F32 bits ----

__global__ void BiasKernel(const uint16_t* __restrict__ src, uint32_t* __restrict__ dst,
                           RowShape s) {
  const int32_t r = blockIdx.x * kThreads + threadIdx.x;
  const int64_t e = blockIdx.y;
  if (r >= s.out_rows) return;
  const int32_t row = SourceRow(s.fc1, r, s.rows);
  dst[e * s.out_rows + r] =
      row == kPadRow ? 0u : static_cast<uint32_t>(src[e * s.rows + row]) << 16;
}

template <bool kVec>
__global__ void CastKernel(const uint16_t* __restrict__ src, uint32_t* __restrict__ dst,
                           int64_t n) {
  const int64_t tid = blockIdx.x * int64_t{kThreads} + threadIdx.x,
                step = int64_t{gridDim.x} * kThreads;
  int64_t done = 0;
  if constexpr (kVec) {
    done = n & ~int64_t{3};
    for (int64_t i = tid; i < n >> 2; i += step) {
      const uint2 h = __ldg(reinterpret_cast<const uint2*>(src) + i);
      reinterpret_cast<uint4*>(dst)[i] =
          make_uint4(h.x << 16, h.x & 0xFFFF0000u, h.y << 16, h.y & 0xFFFF0000u);
    }
  }
  for (int64_t i = done + tid; i < n; i += step) dst[i] = static_cast<uint32_t>(src[i]) << 16;
}

// ---- MXFP4 -> BF16 ----

__device__ uint32_t DequantPair(uint32_t byte, uint32_t s) {
  return Mxfp4ToBf16Bits(byte & 15u, s) | (Mxfp4ToBf16Bits(byte >> 4, s) << 16);
}

// The same pair where Mxfp4FastScale(s): `base` = Mxfp4FastBase(s) (a few integer operations
// an element instead of the exact path's branches, which made the kernel compute bound).
__device__ uint32_t FastPair(uint32_t byte, uint32_t base) {
  return Mxfp4FastBf16Bits(byte & 15u, base) | (Mxfp4FastBf16Bits(byte >> 4, base) << 16);
}

// Four block bytes (8 elements, one scale) -> 16 output bytes.
__device__ uint4 DequantWord(uint32_t w, uint32_t s) {
  if (Mxfp4FastScale(s)) {
    const uint32_t x = Mxfp4FastBase(s);
    return make_uint4(FastPair(w & 0xFFu, x), FastPair((w >> 8) & 0xFFu, x),
                      FastPair((w >> 16) & 0xFFu, x), FastPair(w >> 24, x));
  }
  return make_uint4(DequantPair(w & 0xFFu, s), DequantPair((w >> 8) & 0xFFu, s),
                    DequantPair((w >> 16) & 0xFFu, s), DequantPair(w >> 24, s));
}

// Aligned: a block takes kThreads * kUnroll consecutive block words, each thread kUnroll of
// them kThreads apart (every load and store instruction of a warp contiguous), all loads
// issued before the first store (more bytes in flight). Else a thread per byte.
template <bool kVec>
__global__ void DequantKernel(const uint8_t* __restrict__ blocks,
                              const uint8_t* __restrict__ scales, uint32_t* __restrict__ dst,
                              int64_t pairs) {
  if constexpr (kVec) {
    const int64_t words = pairs / 4, tile = int64_t{kThreads} * kUnroll;
    for (int64_t base = blockIdx.x * tile; base < words; base += int64_t{gridDim.x} * tile) {
      uint32_t w[kUnroll] = {}, s[kUnroll] = {};
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t q = base + u * kThreads + threadIdx.x;
        if (q < words) {
          w[u] = __ldg(reinterpret_cast<const uint32_t*>(blocks) + q);
          s[u] = __ldg(scales + q / 4);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t q = base + u * kThreads + threadIdx.x;
        if (q < words) reinterpret_cast<uint4*>(dst)[q] = DequantWord(w[u], s[u]);
      }
    }
  } else {
    const int64_t tid = blockIdx.x * int64_t{kThreads} + threadIdx.x,
                  step = int64_t{gridDim.x} * kThreads;
    auto* out = reinterpret_cast<uint16_t*>(dst);
    for (int64_t p = tid; p < pairs; p += step) {
      const uint32_t v = DequantPair(blocks[p], scales[p / 16]);
      out[2 * p] = static_cast<uint16_t>(v);
      out[2 * p + 1] = static_cast<uint16_t>(v >> 16);
    }
  }
}

// ---- MXFP4 experts -> BF16, last two axes swapped (transformers' layout) ----

constexpr int kTileRows = 64;                 // checkpoint rows per tile: 128 output bytes
constexpr int kTileCols = 128;                // columns per tile: 64 block bytes, 4 scales
constexpr int kRawWords = kTileCols / 8 + 1;  // staged words per row (+1: fewer conflicts)
constexpr int kTileGroups = kTileCols / 32;   // scale bytes per staged row
constexpr int kWarps = kThreads / 32;

struct ExpertsParams {
  int32_t rows, cols, col_tiles;
};

// Stages the tile's block bytes (rows r0.., bytes c0/2..) and scale bytes in shared memory:
// a warp reads 64 contiguous bytes of each of 8 rows (16-byte loads when aligned).
template <bool kVecIn>
__device__ void StageExpertTile(const uint8_t* __restrict__ blocks,
                                const uint8_t* __restrict__ scales, uint32_t* raw, uint8_t* sc,
                                ExpertsParams p, int32_t r0, int32_t c0) {
  const int32_t row_bytes = p.cols / 2, groups = p.cols / 32;
  if constexpr (kVecIn) {
    static_assert(kTileRows * kTileCols / 32 == kThreads);  // one 16-byte load per thread
    const int32_t lr = threadIdx.x / 4, q = threadIdx.x % 4, r = r0 + lr, byte = c0 / 2 + 16 * q;
    if (r < p.rows && byte < row_bytes) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(blocks + r * row_bytes + byte));
      uint32_t* w = raw + lr * kRawWords + 4 * q;
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    }
  } else {
    auto* raw8 = reinterpret_cast<uint8_t*>(raw);
    for (int32_t i = threadIdx.x; i < kTileRows * kTileCols / 2; i += kThreads) {
      const int32_t lr = i / (kTileCols / 2), b = i % (kTileCols / 2), r = r0 + lr;
      if (r < p.rows && c0 / 2 + b < row_bytes)
        raw8[lr * kRawWords * 4 + b] = blocks[r * row_bytes + c0 / 2 + b];
    }
  }
  for (int32_t i = threadIdx.x; i < kTileRows * kTileGroups; i += kThreads) {
    const int32_t r = r0 + i / kTileGroups, g = c0 / 32 + i % kTileGroups;
    if (r < p.rows && g < groups) sc[i] = scales[r * groups + g];
  }
}

// One element's BF16 bits: `x` is the scale (exact path) or Mxfp4FastBase(scale) (fast path).
template <bool kFast>
__device__ uint32_t ExpertElement(uint32_t nib, uint32_t x) {
  if constexpr (kFast) {
    return Mxfp4FastBf16Bits(nib, x);
  } else {
    return Mxfp4TorchBf16Bits(nib, x);
  }
}

// Columns o0/rows .. +7 of rows r, r+1 (staged words a, b): dst[o0 + k*rows] (and + 1).
template <bool kPairOut, bool kFast>
__device__ void StoreEightColumns(uint16_t* __restrict__ d, uint32_t a, uint32_t b, uint32_t xa,
                                  uint32_t xb, int32_t o0, int32_t rows, bool pair) {
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int32_t o = o0 + k * rows;
    const uint32_t lo = ExpertElement<kFast>((a >> (4 * k)) & 15u, xa);
    if constexpr (kPairOut) {
      const uint32_t hi = ExpertElement<kFast>((b >> (4 * k)) & 15u, xb);
      *reinterpret_cast<uint32_t*>(d + o) = lo | (hi << 16);
    } else {
      d[o] = static_cast<uint16_t>(lo);
      if (pair) d[o + 1] = static_cast<uint16_t>(ExpertElement<kFast>((b >> (4 * k)) & 15u, xb));
    }
  }
}

// Block (tile x, expert y): a tile is kTileRows checkpoint rows x kTileCols columns. After
// staging, lane l of a warp takes rows 2l, 2l+1 and 8 columns (one staged word per row):
// 8 stores of the pair (dst[c][2l], dst[c][2l+1]), each warp store 128 contiguous bytes
// of one dst row. kPairOut: rows even and dst 4-byte aligned (4-byte stores), else 2-byte.
// A warp whose 64 scales are all ordinary (2..252, as in real checkpoints) takes the fast path.
template <bool kVecIn, bool kPairOut>
__global__ void __launch_bounds__(kThreads)
    ExpertsBf16Kernel(const uint8_t* __restrict__ blocks, const uint8_t* __restrict__ scales,
                      uint16_t* __restrict__ dst, ExpertsParams p) {
  __shared__ uint32_t raw[kTileRows * kRawWords];
  __shared__ uint8_t sc[kTileRows * kTileGroups];
  const int64_t e = blockIdx.y, per_expert = int64_t{p.rows} * p.cols;
  const int32_t r0 = static_cast<int32_t>(blockIdx.x / p.col_tiles) * kTileRows,
                c0 = static_cast<int32_t>(blockIdx.x % p.col_tiles) * kTileCols;
  StageExpertTile<kVecIn>(blocks + e * (per_expert / 2), scales + e * (per_expert / 32), raw, sc, p,
                          r0, c0);
  __syncthreads();
  const int32_t lr = 2 * (threadIdx.x % 32), r = r0 + lr;
  const bool valid = r < p.rows, pair = r + 1 < p.rows;  // staged rows past p.rows are garbage
  uint16_t* d = dst + e * per_expert;
  for (int32_t cw = threadIdx.x / 32; cw < kTileCols / 8; cw += kWarps) {  // warp-uniform
    const int32_t c = c0 + 8 * cw;
    if (c >= p.cols) break;
    const uint32_t a = raw[lr * kRawWords + cw], b = raw[(lr + 1) * kRawWords + cw];
    const uint32_t sa = sc[lr * kTileGroups + cw / 4], sb = sc[(lr + 1) * kTileGroups + cw / 4];
    const bool ordinary = !valid || (Mxfp4FastScale(sa) && (!pair || Mxfp4FastScale(sb)));
    const bool fast = __all_sync(0xFFFFFFFFu, ordinary);
    if (!valid) continue;
    const int32_t o0 = c * p.rows + r;
    if (fast) {
      StoreEightColumns<kPairOut, true>(d, a, b, Mxfp4FastBase(sa), Mxfp4FastBase(sb), o0, p.rows,
                                        pair);
    } else {
      StoreEightColumns<kPairOut, false>(d, a, b, sa, sb, o0, p.rows, pair);
    }
  }
}

// ---- FP8 E4M3FN x F32 block scales -> BF16 ----

// Round to nearest even; every NaN is 0x7FFF, as torch's float -> BF16 cast on CUDA writes it.
__device__ uint32_t Bf16Rne(float f) {
  const uint32_t b = __float_as_uint(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFFu;
  return (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
}

// E4M3FN from the fields: exponent 0 is m * 2^-9 (exact in float), else (1 + m/8) *
// 2^(e-7) has float exponent e + 120; S.1111.111 is NaN; no infinities.
__device__ float E4m3fnToFloat(uint32_t b) {
  const uint32_t sign = (b & 0x80u) << 24, e = (b >> 3) & 15u, m = b & 7u;
  if (e == 15u && m == 7u) return __uint_as_float(0x7FC00000u);
  const float mag = e == 0u ? __fmul_rn(__uint2float_rn(m), 0.001953125f)
                            : __uint_as_float(((e + 120u) << 23) | (m << 20));
  return __uint_as_float(__float_as_uint(mag) | sign);
}

__device__ uint32_t Fp8PairBf16(uint32_t two, float s) {
  return Bf16Rne(__fmul_rn(E4m3fnToFloat(two & 0xFFu), s)) |
         (Bf16Rne(__fmul_rn(E4m3fnToFloat((two >> 8) & 0xFFu), s)) << 16);
}

// Block sizes are clamped to the matrix (same quotients), so everything fits int32.
struct Fp8Params {
  int32_t rows, cols, block_rows, block_cols, scale_cols;
};

// kVec: a thread per 8 elements of one row under one scale (cols and block_cols multiples
// of 8, src 8- and dst 16-byte aligned): one 8-byte load, one 16-byte store. Else per element.
template <bool kVec>
__global__ void Fp8BlockKernel(const uint8_t* __restrict__ src, const float* __restrict__ scales,
                               uint16_t* __restrict__ dst, Fp8Params p) {
  constexpr int32_t kPer = kVec ? 8 : 1;
  const int64_t units = int64_t{p.rows} * (p.cols / kPer), step = int64_t{gridDim.x} * kThreads;
  for (int64_t u = blockIdx.x * int64_t{kThreads} + threadIdx.x; u < units; u += step) {
    const auto i = static_cast<int32_t>(u * kPer);
    const int32_t r = i / p.cols, c = i - r * p.cols;
    const float s = __ldg(scales + (r / p.block_rows) * p.scale_cols + c / p.block_cols);
    if constexpr (kVec) {
      const uint2 w = __ldg(reinterpret_cast<const uint2*>(src) + u);
      reinterpret_cast<uint4*>(dst)[u] = make_uint4(Fp8PairBf16(w.x, s), Fp8PairBf16(w.x >> 16, s),
                                                    Fp8PairBf16(w.y, s), Fp8PairBf16(w.y >> 16, s));
    } else {
      dst[i] = static_cast<uint16_t>(Bf16Rne(__fmul_rn(E4m3fnToFloat(src[i]), s)));
    }
  }
}

}  // namespace

base::Status LaunchRowGather(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0 || s.out_cols == 0) return base::Status::Ok();
  const uintptr_t mix = reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst) |
                        static_cast<uintptr_t>(s.cols) | static_cast<uintptr_t>(s.out_cols);
  if (mix % 16 == 0) return GatherAs<uint4>(src, dst, s, stream);
  if (mix % 4 == 0) return GatherAs<uint32_t>(src, dst, s, stream);
  return GatherAs<uint8_t>(src, dst, s, stream);
}

base::Status LaunchScaleSwizzle(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0 || s.out_cols == 0) return base::Status::Ok();
  const BandParams p{s.rows, s.cols, s.out_rows, s.out_cols, s.fc1};
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const int smem = (kBandRows * s.cols + 8 + 15) / 16 * 16;
  if (smem > kMaxBandSmem) {
    const int64_t total = int64_t{s.experts} * s.out_rows * s.out_cols;
    ScaleGenericKernel<<<GridFor(total), kThreads, 0, Stream(stream)>>>(in, out, p, total);
    return Launched();
  }
  const dim3 grid(s.out_rows / kBandRows, s.experts);
  if (Aligned(dst, 16)) {
    ScaleBandKernel<true><<<grid, kThreads, smem, Stream(stream)>>>(in, out, p);
  } else {
    ScaleBandKernel<false><<<grid, kThreads, smem, Stream(stream)>>>(in, out, p);
  }
  return Launched();
}

base::Status LaunchBias(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0) return base::Status::Ok();
  const dim3 grid((s.out_rows + kThreads - 1) / kThreads, s.experts);
  BiasKernel<<<grid, kThreads, 0, Stream(stream)>>>(static_cast<const uint16_t*>(src),
                                                    static_cast<uint32_t*>(dst), s);
  return Launched();
}

base::Status LaunchCopy(const void* src, void* dst, int64_t n, void* stream) {
  if (n == 0) return base::Status::Ok();
  return Checked(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(n), cudaMemcpyDeviceToDevice, Stream(stream)));
}

base::Status LaunchCast(const void* src, void* dst, int64_t n, void* stream) {
  if (n == 0) return base::Status::Ok();
  const auto* in = static_cast<const uint16_t*>(src);
  auto* out = static_cast<uint32_t*>(dst);
  if (Aligned(src, 8) && Aligned(dst, 16)) {
    CastKernel<true><<<GridFor((n + 3) / 4), kThreads, 0, Stream(stream)>>>(in, out, n);
  } else {
    CastKernel<false><<<GridFor(n), kThreads, 0, Stream(stream)>>>(in, out, n);
  }
  return Launched();
}

base::Status LaunchDequant(const void* blocks, const void* scales, void* dst, int64_t pairs,
                           void* stream) {
  if (pairs == 0) return base::Status::Ok();
  const auto* b = static_cast<const uint8_t*>(blocks);
  const auto* s = static_cast<const uint8_t*>(scales);
  auto* out = static_cast<uint32_t*>(dst);
  if (Aligned(blocks, 4) && Aligned(dst, 16)) {
    DequantKernel<true>
        <<<GridFor((pairs / 4 + kUnroll - 1) / kUnroll), kThreads, 0, Stream(stream)>>>(b, s, out,
                                                                                        pairs);
  } else {
    DequantKernel<false><<<GridFor(pairs), kThreads, 0, Stream(stream)>>>(b, s, out, pairs);
  }
  return Launched();
}

base::Status LaunchExpertsBf16(const void* blocks, const void* scales, void* dst, int64_t experts,
                               int64_t rows, int64_t cols, void* stream) {
  if (experts == 0 || rows == 0 || cols == 0) return base::Status::Ok();
  const auto col_tiles = static_cast<int32_t>((cols + kTileCols - 1) / kTileCols);
  const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
  const ExpertsParams p{static_cast<int32_t>(rows), static_cast<int32_t>(cols), col_tiles};
  const dim3 grid(static_cast<unsigned>(row_tiles * col_tiles), static_cast<unsigned>(experts));
  const auto* b = static_cast<const uint8_t*>(blocks);
  const auto* s = static_cast<const uint8_t*>(scales);
  auto* out = static_cast<uint16_t*>(dst);
  const bool vec_in = Aligned(blocks, 16), pair_out = rows % 2 == 0 && Aligned(dst, 4);
  cudaStream_t st = Stream(stream);
  if (vec_in && pair_out) {
    ExpertsBf16Kernel<true, true><<<grid, kThreads, 0, st>>>(b, s, out, p);
  } else if (vec_in) {
    ExpertsBf16Kernel<true, false><<<grid, kThreads, 0, st>>>(b, s, out, p);
  } else if (pair_out) {
    ExpertsBf16Kernel<false, true><<<grid, kThreads, 0, st>>>(b, s, out, p);
  } else {
    ExpertsBf16Kernel<false, false><<<grid, kThreads, 0, st>>>(b, s, out, p);
  }
  return Launched();
}

base::Status LaunchFp8BlockBf16(const void* src, const void* scales, void* dst,
                                const Fp8BlockShape& s, void* stream) {
  if (s.rows == 0 || s.cols == 0) return base::Status::Ok();
  const int64_t br = std::min(s.block_rows, s.rows), bc = std::min(s.block_cols, s.cols);
  const Fp8Params p{static_cast<int32_t>(s.rows), static_cast<int32_t>(s.cols),
                    static_cast<int32_t>(br), static_cast<int32_t>(bc),
                    static_cast<int32_t>((s.cols + bc - 1) / bc)};
  const auto* in = static_cast<const uint8_t*>(src);
  const auto* sc = static_cast<const float*>(scales);
  auto* out = static_cast<uint16_t*>(dst);
  if (s.cols % 8 == 0 && bc % 8 == 0 && Aligned(src, 8) && Aligned(dst, 16)) {
    Fp8BlockKernel<true>
        <<<GridFor(s.rows * s.cols / 8), kThreads, 0, Stream(stream)>>>(in, sc, out, p);
  } else {
    Fp8BlockKernel<false>
        <<<GridFor(s.rows * s.cols), kThreads, 0, Stream(stream)>>>(in, sc, out, p);
  }
  return Launched();
}

}  // namespace loadplan::kernels::device
