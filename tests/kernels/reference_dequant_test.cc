// CPU references of the dequant-to-BF16 kernels (mxfp4_experts_bf16, fp8_block_bf16) against
// hand-computed values (docs/kernels.md): layout, subnormals, rounding ties, inf/NaN edges,
// partial blocks, and refused calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/launch.h"
#include "kernels/recipe.h"
#include "kernels/reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using testing::RandomBytes;
using testing::Scalars;

KernelArgs Args(const std::vector<std::pair<std::string, BufferArg>>& bufs, const Scalars& s) {
  KernelArgs a;
  for (const auto& [n, b] : bufs) a.buffers[n] = b;
  for (const auto& [n, v] : s) a.scalars[n] = v;
  return a;
}

// mxfp4_experts_bf16 on host bytes: dst's BF16 bits, [experts, cols, rows], poisoned first.
std::vector<uint16_t> Experts(std::vector<uint8_t> blocks, std::vector<uint8_t> scales,
                              int64_t experts, int64_t rows, int64_t cols) {
  std::vector<uint16_t> out(static_cast<size_t>(experts * rows * cols), 0xA5A5);
  const Status s = RunReference("mxfp4_experts_bf16",
                                Args({{"blocks", {blocks.data(), blocks.size()}},
                                      {"scales", {scales.data(), scales.size()}},
                                      {"dst", {out.data(), 2 * out.size()}}},
                                     {{"experts", experts}, {"rows", rows}, {"cols", cols}}));
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(ExpertsBf16, HandComputedLayout) {
  // experts = 2, rows = 3, cols = 64: blocks [2, 3, 2, 16], scales [2, 3, 2] -> dst [2, 64, 3].
  std::vector<uint8_t> blocks(2 * 3 * 32, 0), scales(2 * 3 * 2, 127);
  blocks[(1 * 3 + 2) * 32 + 16] = 0x70;  // expert 1, row 2: col 32 = +0, col 33 = 6
  scales[(1 * 3 + 2) * 2 + 1] = 128;     // ... group 1 (cols 32..63): 2^1
  blocks[(0 * 3 + 1) * 32 + 0] = 0x0A;   // expert 0, row 1: col 0 = -1, col 1 = +0
  blocks[(0 * 3 + 0) * 32 + 15] = 0x30;  // expert 0, row 0: col 31 = 1.5 (high nibble)
  const std::vector<uint16_t> v = Experts(blocks, scales, 2, 3, 64);
  const auto at = [&](int64_t e, int64_t c, int64_t r) { return v[(e * 64 + c) * 3 + r]; };
  EXPECT_EQ(at(1, 33, 2), 0x4140);  // 6 * 2 = 12
  EXPECT_EQ(at(0, 0, 1), 0xBF80);   // -1
  EXPECT_EQ(at(0, 31, 0), 0x3FC0);  // 1.5
  int nonzero = 0;
  for (uint16_t x : v) nonzero += x != 0;
  EXPECT_EQ(nonzero, 3);  // everything else is +0, and everything was written
}

// One row of 32 columns holding the codes 0..15 (cols 0..15) then 0 (cols 16..31).
std::vector<uint16_t> EveryCode(uint8_t scale) {
  std::vector<uint8_t> blocks(16, 0);
  for (int b = 0; b < 8; ++b) blocks[b] = static_cast<uint8_t>((2 * b) | (2 * b + 1) << 4);
  return Experts(blocks, {scale}, 1, 1, 32);
}

TEST(ExpertsBf16, ScaleEdges) {
  // 2^128, exactly (torch.ldexp, as measured on the H200): not E8M0 NaN, no 0 * inf.
  std::vector<uint16_t> v = EveryCode(0xFF);
  EXPECT_EQ(v[0], 0x0000);  // +0
  EXPECT_EQ(v[8], 0x8000);  // -0
  EXPECT_EQ(v[16], 0x0000);
  EXPECT_EQ(v[1], 0x7F00);  // 0.5 * 2^128 = 2^127
  EXPECT_EQ(v[9], 0xFF00);
  for (int c = 2; c < 8; ++c) EXPECT_EQ(v[c], 0x7F80) << c;  // >= 2^128: infinity
  for (int c = 10; c < 16; ++c) EXPECT_EQ(v[c], 0xFF80) << c;
  v = EveryCode(254);        // 2^127
  EXPECT_EQ(v[0], 0x0000);   // +0
  EXPECT_EQ(v[8], 0x8000);   // -0
  EXPECT_EQ(v[1], 0x7E80);   // 0.5 * 2^127 = 2^126
  EXPECT_EQ(v[3], 0x7F40);   // 1.5 * 2^127: the largest finite product
  EXPECT_EQ(v[4], 0x7F80);   // 2 * 2^127 overflows float32: inf
  EXPECT_EQ(v[7], 0x7F80);   // 6 * 2^127
  EXPECT_EQ(v[11], 0xFF40);  // -1.5 * 2^127
  EXPECT_EQ(v[15], 0xFF80);  // -6 * 2^127
  v = EveryCode(0);          // 2^-127 (a float32 subnormal)
  EXPECT_EQ(v[1], 0x0020);   // 2^-128: BF16 subnormal 32 * 2^-133
  EXPECT_EQ(v[2], 0x0040);   // 2^-127
  EXPECT_EQ(v[7], 0x0140);   // 6 * 2^-127 = 1.5 * 2^-125: normal
  EXPECT_EQ(v[9], 0x8020);   // -2^-128
  v = EveryCode(127);
  EXPECT_EQ(v[5], 0x4040);   // 3
  EXPECT_EQ(v[14], 0xC080);  // -4
}

// The reference computes in float32; the CUDA kernel builds the bits from the fields
// (recipe.h's Mxfp4TorchBf16Bits). All 16 x 256 codes agree, and differ from
// mxfp4_dequant's Mxfp4ToBf16Bits only at the scale 0xFF.
TEST(ExpertsBf16, ReferenceEqualsFieldConstructionForEveryCode) {
  for (uint32_t s = 0; s < 256; ++s) {
    const std::vector<uint16_t> v = EveryCode(static_cast<uint8_t>(s));
    for (uint32_t nib = 0; nib < 16; ++nib) {
      ASSERT_EQ(v[nib], Mxfp4TorchBf16Bits(nib, s)) << nib << " " << s;
      if (s != 0xFF) {
        ASSERT_EQ(v[nib], Mxfp4ToBf16Bits(nib, s)) << nib << " " << s;
      }
    }
  }
}

// The CUDA kernel's fast path (recipe.h) covers exactly the scales 2..252 and agrees there.
TEST(ExpertsBf16, FastPathEqualsReferenceWhereItApplies) {
  int fast = 0;
  for (uint32_t s = 0; s < 256; ++s) {
    EXPECT_EQ(Mxfp4FastScale(s), s >= 2 && s <= 252) << s;
    if (!Mxfp4FastScale(s)) continue;
    ++fast;
    const std::vector<uint16_t> v = EveryCode(static_cast<uint8_t>(s));
    for (uint32_t nib = 0; nib < 16; ++nib)
      ASSERT_EQ(v[nib], Mxfp4FastBf16Bits(nib, Mxfp4FastBase(s))) << nib << " " << s;
  }
  EXPECT_EQ(fast, 251);
  // Just outside: 253 overflows (6 * 2^126), 1 reaches the subnormals (0.5 * 2^-126).
  EXPECT_EQ(EveryCode(253)[7], 0x7F80);
  EXPECT_EQ(EveryCode(1)[1], 0x0040);
}

// Away from the scale 0xFF, expert e's dst is mxfp4_dequant of its rows, transposed.
TEST(ExpertsBf16, IsMxfp4DequantTransposed) {
  const int64_t experts = 3, rows = 5, cols = 96;
  std::vector<uint8_t> blocks = RandomBytes(experts * rows * cols / 2, 11),
                       scales = RandomBytes(experts * rows * cols / 32, 12);
  for (uint8_t& s : scales) s = s == 0xFF ? 0xFE : s;
  const std::vector<uint16_t> t = Experts(blocks, scales, experts, rows, cols);
  std::vector<uint16_t> d(static_cast<size_t>(experts * rows * cols), 0xA5A5);
  ASSERT_TRUE(RunReference("mxfp4_dequant", Args({{"blocks", {blocks.data(), blocks.size()}},
                                                  {"scales", {scales.data(), scales.size()}},
                                                  {"dst", {d.data(), 2 * d.size()}}},
                                                 {{"rows", experts * rows}, {"cols", cols}}))
                  .ok());
  for (int64_t e = 0; e < experts; ++e) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(t[(e * cols + c) * rows + r], d[(e * rows + r) * cols + c]) << e << r << c;
    }
  }
}

// fp8_block_bf16 on host values: dst's BF16 bits, [rows, cols], poisoned first.
std::vector<uint16_t> Fp8(std::vector<uint8_t> src, std::vector<float> scales, int64_t rows,
                          int64_t cols, int64_t block_rows, int64_t block_cols) {
  std::vector<uint16_t> out(static_cast<size_t>(rows * cols), 0xA5A5);
  const Status s =
      RunReference("fp8_block_bf16", Args({{"src", {src.data(), src.size()}},
                                           {"scales", {scales.data(), 4 * scales.size()}},
                                           {"dst", {out.data(), 2 * out.size()}}},
                                          {{"rows", rows},
                                           {"cols", cols},
                                           {"block_rows", block_rows},
                                           {"block_cols", block_cols}}));
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// One element `code` times `scale`.
uint16_t Fp8One(uint8_t code, float scale) { return Fp8({code}, {scale}, 1, 1, 128, 128)[0]; }

float FromBits(uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Fp8BlockBf16, HandComputedValues) {
  EXPECT_EQ(Fp8One(0x38, 1), 0x3F80);      // 1.0 (exponent 7, the bias)
  EXPECT_EQ(Fp8One(0x00, 1), 0x0000);      // +0
  EXPECT_EQ(Fp8One(0x80, 1), 0x8000);      // -0
  EXPECT_EQ(Fp8One(0x01, 1), 0x3B00);      // the smallest subnormal, 2^-9
  EXPECT_EQ(Fp8One(0x07, 1), 0x3C60);      // 7 * 2^-9
  EXPECT_EQ(Fp8One(0x08, 1), 0x3C80);      // the smallest normal, 2^-6
  EXPECT_EQ(Fp8One(0x7E, 1), 0x43E0);      // 448, the largest
  EXPECT_EQ(Fp8One(0x77, 1), 0x4370);      // 240
  EXPECT_EQ(Fp8One(0x40, 0.1f), 0x3E4D);   // 2 * 0.1f rounds
  const float third = 1.0f / 3.0f;         // 0x3EAAAAAB
  EXPECT_EQ(Fp8One(0x39, third), 0x3EC0);  // 1.125 / 3
  EXPECT_EQ(Fp8One(0x3B, third), 0x3EEB);  // 1.375 / 3
  EXPECT_EQ(Fp8One(0xB9, third), 0xBEC0);
  // Ties go to even: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6.
  EXPECT_EQ(Fp8One(0x38, FromBits(0x3F808000)), 0x3F80);
  EXPECT_EQ(Fp8One(0x38, FromBits(0x3F818000)), 0x3F82);
}

TEST(Fp8BlockBf16, SubnormalsInfinityAndNaN) {
  EXPECT_EQ(Fp8One(0x01, std::ldexp(1.0f, -124)), 0x0001);  // 2^-133: the smallest BF16
  EXPECT_EQ(Fp8One(0x01, std::ldexp(1.0f, -125)), 0x0000);  // 2^-134: a tie, to even 0
  EXPECT_EQ(Fp8One(0x03, std::ldexp(1.0f, -126)), 0x0001);  // 3 * 2^-135 rounds up
  EXPECT_EQ(Fp8One(0x7E, std::ldexp(1.0f, 127)), 0x7F80);   // 448 * 2^127 overflows float32
  EXPECT_EQ(Fp8One(0xFE, std::ldexp(1.0f, 127)), 0xFF80);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Fp8One(0x38, inf), 0x7F80);
  // Every NaN is 0x7FFF, as torch's float -> BF16 cast on CUDA writes it.
  EXPECT_EQ(Fp8One(0x00, inf), 0x7FFF);  // 0 * inf
  EXPECT_EQ(Fp8One(0x7F, 1), 0x7FFF);    // E4M3FN NaN
  EXPECT_EQ(Fp8One(0xFF, 1), 0x7FFF);    // negative NaN: the same
  EXPECT_EQ(Fp8One(0x38, nan), 0x7FFF);
  EXPECT_EQ(Fp8One(0x38, -nan), 0x7FFF);
  EXPECT_EQ(Fp8One(0x00, nan), 0x7FFF);
  EXPECT_EQ(Fp8One(0x78, 1), 0x4380);  // 256: exponent 15 is finite except S.1111.111
}

// rows = 300, cols = 200 in 128 x 128 blocks: 3 x 2 scales, the last row and column of
// blocks partial. Element (r, c) is 1.0 times scale (r / 128, c / 128) = 2^(2*(r/128) + c/128).
TEST(Fp8BlockBf16, PartialBlocks) {
  const int64_t rows = 300, cols = 200;
  std::vector<float> scales(6);
  for (int i = 0; i < 6; ++i) scales[i] = std::ldexp(1.0f, i);
  const std::vector<uint16_t> v =
      Fp8(std::vector<uint8_t>(rows * cols, 0x38), scales, rows, cols, 128, 128);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int i = static_cast<int>(2 * (r / 128) + c / 128);
      ASSERT_EQ(v[r * cols + c], 0x3F80 + (i << 7)) << r << " " << c;
    }
  }
  EXPECT_EQ(v[127 * cols + 127], 0x3F80);             // block (0, 0)
  EXPECT_EQ(v[127 * cols + 128], 0x4000);             // (0, 1): 2
  EXPECT_EQ(v[128 * cols + 127], 0x4080);             // (1, 0): 4
  EXPECT_EQ(v[299 * cols + 199], 0x3F80 + (5 << 7));  // (2, 1): 32
  // Non-square blocks, neither dividing the shape: 2 x 3 blocks over 5 x 7, 3 x 3 scales.
  std::vector<float> s9(9);
  for (int i = 0; i < 9; ++i) s9[i] = static_cast<float>(i + 1);
  const std::vector<uint16_t> w = Fp8(std::vector<uint8_t>(35, 0x38), s9, 5, 7, 2, 3);
  EXPECT_EQ(w[4 * 7 + 6], 0x4110);  // (4, 6) -> scale (2, 2) = 9
  EXPECT_EQ(w[1 * 7 + 3], 0x4000);  // (1, 3) -> scale (0, 1) = 2
  EXPECT_EQ(w[2 * 7 + 2], 0x4080);  // (2, 2) -> scale (1, 0) = 4
}

// Refused calls touch nothing; the GPU launch refuses the same call with the same message.
void ExpectRefused(const std::string& k, const KernelArgs& args) {
  const Status s = RunReference(k, args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(k, 0), 0u) << s.message();
  EXPECT_EQ(LaunchDerive(k, args, nullptr).message(), s.message());
}

TEST(DequantBf16Refusals, BadScalarsAndBuffers) {
  std::vector<uint8_t> in = RandomBytes(1 << 12, 3), out(1 << 13, 0xA5);
  const Scalars fp8 = {{"rows", 4}, {"cols", 6}, {"block_rows", 2}, {"block_cols", 4}};
  const auto fp8_args = [&](const Scalars& s, uint64_t scale_bytes) {
    return Args({{"src", {in.data(), 24}},
                 {"scales", {in.data() + 64, scale_bytes}},
                 {"dst", {out.data(), 48}}},
                s);
  };
  EXPECT_TRUE(RunReference("fp8_block_bf16", fp8_args(fp8, 16)).ok());  // 2 x 2 scales
  std::fill(out.begin(), out.end(), 0xA5);
  ExpectRefused("fp8_block_bf16", fp8_args(fp8, 15));  // scales one byte short
  Scalars bad = fp8;
  bad["block_cols"] = 0;
  ExpectRefused("fp8_block_bf16", fp8_args(bad, 16));
  bad = fp8;
  bad.erase("block_rows");
  ExpectRefused("fp8_block_bf16", fp8_args(bad, 16));
  const auto mx = [&](int64_t cols, uint64_t scale_bytes, uint8_t* scales) {
    return Args({{"blocks", {in.data(), 2 * 3 * 32}},
                 {"scales", {scales, scale_bytes}},
                 {"dst", {out.data(), 2 * 2 * 3 * 64}}},
                {{"experts", 2}, {"rows", 3}, {"cols", cols}});
  };
  ExpectRefused("mxfp4_experts_bf16", mx(48, 12, in.data() + 1024));  // not whole groups
  ExpectRefused("mxfp4_experts_bf16", mx(64, 11, in.data() + 1024));  // scales short
  ExpectRefused("mxfp4_experts_bf16", mx(64, 12, out.data() + 8));    // overlaps dst
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0xA5; }));
}

}  // namespace
}  // namespace loadplan::kernels
