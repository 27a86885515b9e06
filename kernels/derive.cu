// CUDA derive kernels: the MXFP4 expert prep as single-pass gathers (recipe.h),
// BF16 -> F32 widening and copy. Memory bound: 16-byte accesses, coalesced.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/device_launch.h"
#include "kernels/recipe.h"

namespace loadplan::kernels::device {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;            // independent loads in flight per thread
constexpr int kItemsPerBlock = 2048;  // row gather: output items per block
constexpr int kBandRows = 128;        // scale swizzle: rows per block (one 128-row band)
constexpr int kMaxBandSmem = 48 * 1024;

int Launched() { return static_cast<int>(cudaGetLastError()); }
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
int GatherAs(const void* src, void* dst, const RowShape& s, void* stream) {
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

// Thread per 4 block bytes (8 elements, one scale) when aligned; else per byte.
template <bool kVec>
__global__ void DequantKernel(const uint8_t* __restrict__ blocks,
                              const uint8_t* __restrict__ scales, uint32_t* __restrict__ dst,
                              int64_t pairs) {
  const int64_t tid = blockIdx.x * int64_t{kThreads} + threadIdx.x,
                step = int64_t{gridDim.x} * kThreads;
  if constexpr (kVec) {
    for (int64_t q = tid; q < pairs / 4; q += step) {
      const uint32_t w = __ldg(reinterpret_cast<const uint32_t*>(blocks) + q), s = scales[q / 4];
      reinterpret_cast<uint4*>(dst)[q] =
          make_uint4(DequantPair(w & 0xFFu, s), DequantPair((w >> 8) & 0xFFu, s),
                     DequantPair((w >> 16) & 0xFFu, s), DequantPair(w >> 24, s));
    }
  } else {
    auto* out = reinterpret_cast<uint16_t*>(dst);
    for (int64_t p = tid; p < pairs; p += step) {
      const uint32_t v = DequantPair(blocks[p], scales[p / 16]);
      out[2 * p] = static_cast<uint16_t>(v);
      out[2 * p + 1] = static_cast<uint16_t>(v >> 16);
    }
  }
}

}  // namespace

int LaunchRowGather(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0 || s.out_cols == 0) return 0;
  const uintptr_t mix = reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst) |
                        static_cast<uintptr_t>(s.cols) | static_cast<uintptr_t>(s.out_cols);
  if (mix % 16 == 0) return GatherAs<uint4>(src, dst, s, stream);
  if (mix % 4 == 0) return GatherAs<uint32_t>(src, dst, s, stream);
  return GatherAs<uint8_t>(src, dst, s, stream);
}

int LaunchScaleSwizzle(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0 || s.out_cols == 0) return 0;
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

int LaunchBias(const void* src, void* dst, const RowShape& s, void* stream) {
  if (s.experts == 0 || s.out_rows == 0) return 0;
  const dim3 grid((s.out_rows + kThreads - 1) / kThreads, s.experts);
  BiasKernel<<<grid, kThreads, 0, Stream(stream)>>>(static_cast<const uint16_t*>(src),
                                                    static_cast<uint32_t*>(dst), s);
  return Launched();
}

int LaunchCopy(const void* src, void* dst, int64_t n, void* stream) {
  if (n == 0) return 0;
  return static_cast<int>(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(n), cudaMemcpyDeviceToDevice, Stream(stream)));
}

int LaunchCast(const void* src, void* dst, int64_t n, void* stream) {
  if (n == 0) return 0;
  const auto* in = static_cast<const uint16_t*>(src);
  auto* out = static_cast<uint32_t*>(dst);
  if (Aligned(src, 8) && Aligned(dst, 16)) {
    CastKernel<true><<<GridFor((n + 3) / 4), kThreads, 0, Stream(stream)>>>(in, out, n);
  } else {
    CastKernel<false><<<GridFor(n), kThreads, 0, Stream(stream)>>>(in, out, n);
  }
  return Launched();
}

int LaunchDequant(const void* blocks, const void* scales, void* dst, int64_t pairs, void* stream) {
  if (pairs == 0) return 0;
  const auto* b = static_cast<const uint8_t*>(blocks);
  const auto* s = static_cast<const uint8_t*>(scales);
  auto* out = static_cast<uint32_t*>(dst);
  if (Aligned(blocks, 4) && Aligned(dst, 16)) {
    DequantKernel<true><<<GridFor(pairs / 4), kThreads, 0, Stream(stream)>>>(b, s, out, pairs);
  } else {
    DequantKernel<false><<<GridFor(pairs), kThreads, 0, Stream(stream)>>>(b, s, out, pairs);
  }
  return Launched();
}

const char* ErrorName(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
const char* ErrorString(int code) { return cudaGetErrorString(static_cast<cudaError_t>(code)); }

}  // namespace loadplan::kernels::device
