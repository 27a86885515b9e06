// CPU references of the derive kernels: the MXFP4 recipe of docs/kernels.md, step by step;
// the dequantizations as the formulas of docs/kernels.md, element by element.
#include "kernels/reference.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace loadplan::kernels {
namespace {

// memcpy of `n` bytes that is also defined for n == 0 (where either pointer may be null:
// an empty vector's data(), a zero-column expert).
void CopyBytes(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n));
}

// A row-major matrix of `rows` rows of `row_bytes` bytes, zero-initialised (padding is 0).
struct Matrix {
  int64_t rows = 0;
  int64_t row_bytes = 0;
  std::vector<uint8_t> bytes;
  Matrix(int64_t r, int64_t rb) : rows(r), row_bytes(rb), bytes(static_cast<size_t>(r * rb), 0) {}
  uint8_t* Row(int64_t r) { return bytes.data() + r * row_bytes; }
  const uint8_t* Row(int64_t r) const { return bytes.data() + r * row_bytes; }
};

// fc1: take up rows (odd checkpoint rows 2i+1) then gate rows (even rows 2i), each
// zero-padded to i_pad rows and out_cols elements; stack [up; gate]; interleave
// (row 2i = up i, row 2i+1 = gate i).
Matrix Fc1Rows(const uint8_t* expert, const RowShape& s, int64_t elem) {
  const int64_t i_pad = s.out_rows / 2, n = s.rows / 2, in_row = int64_t{s.cols} * elem;
  Matrix stacked(s.out_rows, int64_t{s.out_cols} * elem);
  for (int64_t i = 0; i < n; ++i) {
    CopyBytes(stacked.Row(i), expert + (2 * i + 1) * in_row, in_row);      // up i
    CopyBytes(stacked.Row(i_pad + i), expert + (2 * i) * in_row, in_row);  // gate i
  }
  Matrix interleaved(s.out_rows, stacked.row_bytes);
  for (int64_t i = 0; i < i_pad; ++i) {
    CopyBytes(interleaved.Row(2 * i), stacked.Row(i), stacked.row_bytes);
    CopyBytes(interleaved.Row(2 * i + 1), stacked.Row(i_pad + i), stacked.row_bytes);
  }
  return interleaved;
}

// fc2: rows padded to h_pad, columns to out_cols elements.
Matrix Fc2Rows(const uint8_t* expert, const RowShape& s, int64_t elem) {
  const int64_t in_row = int64_t{s.cols} * elem;
  Matrix padded(s.out_rows, int64_t{s.out_cols} * elem);
  for (int64_t r = 0; r < s.rows; ++r) {
    CopyBytes(padded.Row(r), expert + r * in_row, in_row);
  }
  return padded;
}

// The 32-row block shuffle in gather form: dst[32q + d] = src[32q + 4(d % 8) + d / 8].
Matrix BlockShuffle(const Matrix& src) {
  Matrix dst(src.rows, src.row_bytes);
  for (int64_t q = 0; q < src.rows / 32; ++q) {
    for (int64_t d = 0; d < 32; ++d) {
      CopyBytes(dst.Row(32 * q + d), src.Row(32 * q + 4 * (d % 8) + d / 8), src.row_bytes);
    }
  }
  return dst;
}

// One expert's rows through the whole row recipe (fc1 or fc2), then the shuffle.
Matrix ExpertRows(const uint8_t* src, const RowShape& s, int64_t e, int64_t elem) {
  const uint8_t* expert = src + e * s.rows * int64_t{s.cols} * elem;
  return BlockShuffle(s.fc1 ? Fc1Rows(expert, s, elem) : Fc2Rows(expert, s, elem));
}

// 128x4 swizzle of an [M, K] byte matrix into `out` (M*K bytes), scatter form:
// (r, k), r = 128a + 32b + c, k = 4d + e  ->  ((a*(K/4) + d)*32 + c)*16 + 4b + e.
void Swizzle(const Matrix& m, uint8_t* out) {
  const int64_t kq = m.row_bytes / 4;
  for (int64_t r = 0; r < m.rows; ++r) {
    const int64_t a = r / 128, b = (r % 128) / 32, c = r % 32;
    for (int64_t k = 0; k < m.row_bytes; ++k) {
      const int64_t d = k / 4, e = k % 4;
      out[((a * kq + d) * 32 + c) * 16 + 4 * b + e] = m.Row(r)[k];
    }
  }
}

// BF16 -> F32 is exact: the F32 bits are the BF16 bits followed by 16 zero bits.
void WidenBf16(const uint8_t* src, uint8_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = 0;
    std::memcpy(&h, src + 2 * i, 2);
    const uint32_t f = static_cast<uint32_t>(h) << 16;
    std::memcpy(dst + 4 * i, &f, 4);
  }
}

enum class RowOutput : uint8_t { kBytes, kSwizzledScales, kWidenedBias };

void RunRows(const ResolvedCall& c, RowOutput kind) {
  const RowShape& s = c.shape;
  const auto* src = static_cast<const uint8_t*>(c.src);
  auto* dst = static_cast<uint8_t*>(c.dst);
  const bool bias = kind == RowOutput::kWidenedBias;
  const bool scales = kind == RowOutput::kSwizzledScales;
  const int64_t out_elems = int64_t{s.out_rows} * s.out_cols;
  for (int64_t e = 0; e < s.experts; ++e) {
    const Matrix m = ExpertRows(src, s, e, bias ? 2 : 1);
    if (bias) {
      WidenBf16(m.bytes.data(), dst + e * out_elems * 4, out_elems);
    } else if (scales) {
      Swizzle(m, dst + e * out_elems);
    } else {
      CopyBytes(dst + e * out_elems, m.bytes.data(), static_cast<int64_t>(m.bytes.size()));
    }
  }
}

// One FP4 (E2M1) element times an E8M0 scale, as BF16 bits. Computed in double
// (exact: at most 2 significant bits), then narrowed: values over the F32/BF16
// range become infinity, a NaN scale (0xFF) makes the element NaN (0x7FC0).
uint16_t DequantOne(uint8_t nibble, uint8_t scale) {
  static constexpr double kE2M1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const uint16_t sign = (nibble & 8) != 0 ? 0x8000 : 0;
  if (scale == 0xFF) return 0x7FC0;
  const double v = std::ldexp(kE2M1[nibble & 7], int{scale} - 127);
  if (v > std::numeric_limits<float>::max()) return sign | 0x7F80;
  const float f = static_cast<float>(v);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(sign | ((bits >> 16) & 0x7FFF));
}

// Byte b of a row's group g holds elements 32g + 2b (low nibble) and 32g + 2b + 1
// (high nibble); the group's scale is scales[g]. Rows are contiguous, so the
// global byte index p covers elements 2p, 2p+1 with scale p / 16.
void Dequant(const ResolvedCall& c) {
  const auto* blocks = static_cast<const uint8_t*>(c.src);
  const auto* scales = static_cast<const uint8_t*>(c.scales);
  auto* dst = static_cast<uint8_t*>(c.dst);
  const int64_t pairs = c.rows * c.cols / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    const uint16_t v[2] = {DequantOne(blocks[p] & 15, scales[p / 16]),
                           DequantOne(blocks[p] >> 4, scales[p / 16])};
    std::memcpy(dst + 4 * p, v, 4);
  }
}

// Float32 -> BF16 bits, round to nearest even (carrying into the exponent, up to
// infinity); every NaN becomes 0x7FFF, what torch's float -> BF16 cast writes on CUDA
// (measured on the H200, torch 2.11; its CPU kernels write 0xFFFF).
uint16_t Bf16Rne(float f) {
  if (std::isnan(f)) return 0x7FFF;
  uint32_t bits = 0;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

void StoreBf16(uint8_t* dst, int64_t i, uint16_t v) { std::memcpy(dst + 2 * i, &v, 2); }

// transformers' convert_moe_packed_tensors, then .transpose(1, 2): element (e, r, col)
// is the FP4 lut value of its nibble times 2^(scale - 127), exactly (torch.ldexp: no
// intermediate overflow), rounded to BF16, and lands at dst[e][col][r].
void ExpertsBf16(const ResolvedCall& c) {
  static constexpr float kFp4[16] = {+0.0f, 0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                     -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  const auto* blocks = static_cast<const uint8_t*>(c.src);
  const auto* scales = static_cast<const uint8_t*>(c.scales);
  auto* dst = static_cast<uint8_t*>(c.dst);
  for (int64_t e = 0; e < c.experts; ++e) {
    for (int64_t r = 0; r < c.rows; ++r) {
      const int64_t row = e * c.rows + r;
      for (int64_t col = 0; col < c.cols; ++col) {
        const uint8_t byte = blocks[row * (c.cols / 2) + col / 2];
        const int nibble = col % 2 == 0 ? byte & 0xF : byte >> 4;
        const int s = int{scales[row * (c.cols / 32) + col / 32]} - 127;
        const float value = std::ldexp(kFp4[nibble], s);
        StoreBf16(dst, (e * c.cols + col) * c.rows + r, Bf16Rne(value));
      }
    }
  }
}

// FP8 E4M3FN: sign, 4 exponent bits (bias 7), 3 mantissa bits; exponent 0 is subnormal
// (m * 2^-9); no infinities: S.1111.111 is NaN.
float E4m3fn(uint8_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  float mag = 0;
  if (e == 15 && m == 7) {
    mag = std::numeric_limits<float>::quiet_NaN();
  } else if (e == 0) {
    mag = std::ldexp(static_cast<float>(m), -9);
  } else {
    mag = std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
  }
  return (b & 0x80) != 0 ? -mag : mag;
}

// dst[r][col] = BF16(float32(src[r][col]) * scales[r / block_rows][col / block_cols]),
// scales row-major [ceil(rows / block_rows), ceil(cols / block_cols)].
void Fp8BlockBf16(const ResolvedCall& c) {
  const auto* src = static_cast<const uint8_t*>(c.src);
  const auto* scales = static_cast<const uint8_t*>(c.scales);
  auto* dst = static_cast<uint8_t*>(c.dst);
  const int64_t scale_cols = (c.cols + c.block_cols - 1) / c.block_cols;
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t col = 0; col < c.cols; ++col) {
      float scale = 0;
      std::memcpy(&scale, scales + 4 * ((r / c.block_rows) * scale_cols + col / c.block_cols), 4);
      const float value = E4m3fn(src[r * c.cols + col]) * scale;
      StoreBf16(dst, r * c.cols + col, Bf16Rne(value));
    }
  }
}

}  // namespace

// One arm per registry kernel (exhaustive: a new KernelId does not compile without one).
void RunResolvedReference(const ResolvedCall& c) {
  switch (c.kernel) {
    case KernelId::kCopy:
      if (c.n > 0) std::memcpy(c.dst, c.src, static_cast<size_t>(c.n));
      return;
    case KernelId::kCastBf16F32:
      WidenBf16(static_cast<const uint8_t*>(c.src), static_cast<uint8_t*>(c.dst), c.n);
      return;
    case KernelId::kFp8BlockBf16: Fp8BlockBf16(c); return;
    case KernelId::kMxfp4Dequant: Dequant(c); return;
    case KernelId::kMxfp4ExpertsBf16: ExpertsBf16(c); return;
    case KernelId::kMxfp4Fc1Weight:
    case KernelId::kMxfp4Fc2Weight: RunRows(c, RowOutput::kBytes); return;
    case KernelId::kMxfp4Fc1Scales:
    case KernelId::kMxfp4Fc2Scales: RunRows(c, RowOutput::kSwizzledScales); return;
    case KernelId::kMxfp4Fc1Bias:
    case KernelId::kMxfp4Fc2Bias: RunRows(c, RowOutput::kWidenedBias); return;
  }
}

Status RunReference(std::string_view name, const KernelArgs& args) {
  Resolution r = Resolve(name, args);
  if (!r.status.ok()) return r.status;
  RunResolvedReference(*r.call);
  return Status::Ok();
}

}  // namespace loadplan::kernels
