// CPU references of the derive kernels against hand-computed index mappings
// (docs/kernels.md "The MXFP4 recipe specification") and refused calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/launch.h"
#include "kernels/recipe.h"
#include "kernels/reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using testing::DstBytes;
using testing::RandomBytes;
using testing::RunRef;
using testing::Scalars;

constexpr int kPad = -1;

// Output row `r` (of `out_cols` bytes) equals source row `src_row` (of `cols`
// bytes) followed by zeros, or is all zeros when src_row == kPad.
void ExpectRow(const std::vector<uint8_t>& out, int64_t r, int64_t out_cols,
               const std::vector<uint8_t>& src, int64_t src_row, int64_t cols) {
  for (int64_t k = 0; k < out_cols; ++k) {
    const uint8_t want = (src_row == kPad || k >= cols) ? 0 : src[src_row * cols + k];
    ASSERT_EQ(out[r * out_cols + k], want) << "row " << r << " byte " << k;
  }
}

TEST(Fc1Weight, HandComputedRows) {
  // I = H = 96: rows = 192, cols = 48 bytes; i_pad = k_pad = 128 -> [256, 64].
  const Scalars s = {{"experts", 1}, {"rows", 192}, {"cols", 48}, {"i_pad", 128}, {"k_pad", 128}};
  const std::vector<uint8_t> src = RandomBytes(192 * 48, 1);
  const auto r = RunRef("mxfp4_fc1_weight", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // out row -> shuffled row s = 32q + 4(d%8) + d/8 -> even s: up s/2 (ckpt 2i+1), odd: gate (ckpt
  // 2i).
  const std::vector<std::pair<int, int>> cases = {{0, 1},       // s=0: up 0
                                                  {1, 5},       // s=4: up 2
                                                  {2, 9},       // s=8: up 4
                                                  {7, 29},      // s=28: up 14
                                                  {8, 0},       // s=1: gate 0
                                                  {9, 4},       // s=5: gate 2
                                                  {16, 3},      // s=2: up 1
                                                  {24, 2},      // s=3: gate 1
                                                  {31, 30},     // s=31: gate 15
                                                  {32, 33},     // s=32: up 16
                                                  {168, 160},   // s=161: gate 80
                                                  {191, 190},   // s=191: gate 95
                                                  {192, kPad},  // s=192: up 96 >= I
                                                  {255, kPad}};
  for (const auto& [row, want] : cases) ExpectRow(r.dst, row, 64, src, want, 48);
}

TEST(Fc2Weight, HandComputedRows) {
  // H = 80 rows of I/2 = 40 bytes; h_pad = i_pad = 128 -> [128, 64].
  const Scalars s = {{"experts", 2}, {"rows", 80}, {"cols", 40}, {"h_pad", 128}, {"i_pad", 128}};
  const std::vector<uint8_t> src = RandomBytes(2 * 80 * 40, 2);
  const auto r = RunRef("mxfp4_fc2_weight", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::vector<std::pair<int, int>> cases = {
      {0, 0}, {1, 4}, {8, 1}, {31, 31}, {65, 68}, {67, 76}, {68, kPad}, {72, 65}, {127, kPad}};
  for (const auto& [row, want] : cases) ExpectRow(r.dst, row, 64, src, want, 40);
  // Expert 1 reads expert 1's rows: out row 1 of expert 1 is its row 4.
  const std::vector<uint8_t> e1(r.dst.begin() + 128 * 64, r.dst.end());
  const std::vector<uint8_t> src1(src.begin() + 80 * 40, src.end());
  ExpectRow(e1, 1, 64, src1, 4, 40);
}

TEST(Fc2Scales, HandComputedSwizzle) {
  // H = 96 rows of I/32 = 3 bytes; h_pad = i_pad = 128 -> M = 128, K = 4: one 512-byte tile.
  const Scalars s = {{"experts", 1}, {"rows", 96}, {"cols", 3}, {"h_pad", 128}, {"i_pad", 128}};
  const std::vector<uint8_t> src = RandomBytes(96 * 3, 3);
  const auto r = RunRef("mxfp4_fc2_scales", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto at = [&](int row, int k) { return src[row * 3 + k]; };
  // offset = c*16 + 4b + e for r = 32b + c, k = e; out row r reads ckpt row shuffle(r).
  EXPECT_EQ(r.dst[0], at(0, 0));
  EXPECT_EQ(r.dst[1], at(0, 1));
  EXPECT_EQ(r.dst[3], 0);                    // k = 3 >= cols
  EXPECT_EQ(r.dst[4], at(32, 0));            // b = 1: r = 32
  EXPECT_EQ(r.dst[16], at(4, 0));            // c = 1: r = 1 -> row 4
  EXPECT_EQ(r.dst[16 + 8], at(68, 0));       // c = 1, b = 2: r = 65 -> row 68
  EXPECT_EQ(r.dst[128 + 8 + 2], at(65, 2));  // c = 8, b = 2, e = 2: r = 72 -> row 65
  EXPECT_EQ(r.dst[128 + 12 + 1], 0);         // c = 8, b = 3: r = 104 -> row 97 >= H
}

TEST(Fc2Scales, HandComputedSecondTileColumn) {
  // i_pad = 256 -> K = 8 (two 4-byte tile columns), cols = 5.
  const Scalars s = {{"experts", 1}, {"rows", 128}, {"cols", 5}, {"h_pad", 128}, {"i_pad", 256}};
  const std::vector<uint8_t> src = RandomBytes(128 * 5, 4);
  const auto r = RunRef("mxfp4_fc2_scales", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.dst[512], src[0 * 5 + 4]);            // (r=0, k=4): d = 1 -> tile 1
  EXPECT_EQ(r.dst[512 + 3 * 16], src[12 * 5 + 4]);  // (r=3, k=4): row shuffle(3) = 12
  EXPECT_EQ(r.dst[512 + 3 * 16 + 1], 0);            // k = 5 >= cols
}

TEST(Fc1Scales, HandComputedSecondBand) {
  // I = 96 (rows 192), cols 3; i_pad = 128 -> M = 256 (two bands), K = 4.
  const Scalars s = {{"experts", 1}, {"rows", 192}, {"cols", 3}, {"i_pad", 128}, {"k_pad", 128}};
  const std::vector<uint8_t> src = RandomBytes(192 * 3, 5);
  const auto r = RunRef("mxfp4_fc1_scales", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // (r=130, k=1): a = 1, c = 2 -> (32 + 2)*16 + 1; r = 130 -> s = 136 -> up 68 -> ckpt 137.
  EXPECT_EQ(r.dst[(32 + 2) * 16 + 1], src[137 * 3 + 1]);
  // (r=8, k=0): s = 1 -> gate 0 -> ckpt 0.
  EXPECT_EQ(r.dst[8 * 16], src[0]);
}

TEST(Fc1Bias, WidensExactlyAndPermutes) {
  const Scalars s = {{"experts", 1}, {"rows", 192}, {"i_pad", 128}};
  std::vector<uint8_t> src = RandomBytes(192 * 2, 6);
  const uint16_t one = 0x3F80, minus_two = 0xC000;  // 1.0, -2.0
  std::memcpy(&src[2 * 1], &one, 2);                // ckpt row 1 = up 0
  std::memcpy(&src[2 * 0], &minus_two, 2);          // ckpt row 0 = gate 0
  const auto r = RunRef("mxfp4_fc1_bias", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  float f[256];
  std::memcpy(f, r.dst.data(), sizeof f);
  EXPECT_EQ(f[0], 1.0f);    // out row 0 = up 0
  EXPECT_EQ(f[8], -2.0f);   // out row 8 = gate 0
  EXPECT_EQ(f[192], 0.0f);  // padding
  uint32_t bits = 0;
  std::memcpy(&bits, &r.dst[4 * 1], 4);  // out row 1 = up 2 = ckpt row 5
  EXPECT_EQ(bits, (uint32_t{src[10]} | uint32_t{src[11]} << 8) << 16);
}

TEST(Fc2Bias, PadsAndShuffles) {
  const Scalars s = {{"experts", 1}, {"rows", 40}, {"h_pad", 128}};
  const std::vector<uint8_t> src = RandomBytes(40 * 2, 7);
  const auto r = RunRef("mxfp4_fc2_bias", s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto bits = [&](int row) {
    uint32_t b;
    std::memcpy(&b, &r.dst[4 * row], 4);
    return b;
  };
  EXPECT_EQ(bits(1), (uint32_t{src[8]} | uint32_t{src[9]} << 8) << 16);  // row 1 <- 4
  EXPECT_EQ(bits(41), (uint32_t{src[74]} | uint32_t{src[75]} << 8)
                          << 16);  // d = 9: s = 32 + 4 + 1 = 37
  EXPECT_EQ(bits(34), 0u);         // d = 2: s = 32 + 8 = 40 >= H
}

TEST(CopyAndCast, CopyBytesAndWidenBf16) {
  const std::vector<uint8_t> src = RandomBytes(1001, 8);
  const auto c = RunRef("copy", {{"n", 1001}}, src, 16);
  ASSERT_TRUE(c.status.ok());
  EXPECT_TRUE(std::equal(src.begin(), src.end(), c.dst.begin()));
  EXPECT_EQ(c.dst[1001], 0xA5);  // nothing written past the extent
  const auto w = RunRef("cast_bf16_f32", {{"n", 500}}, src, 4);
  ASSERT_TRUE(w.status.ok());
  uint32_t b = 0;
  std::memcpy(&b, &w.dst[4 * 499], 4);
  EXPECT_EQ(b, (uint32_t{src[998]} | uint32_t{src[999]} << 8) << 16);
  EXPECT_EQ(w.dst[2000], 0xA5);
}

// Dequantises one row of 32 elements with `scale`; returns the 32 BF16 values' bits.
std::vector<uint16_t> DequantRow(const std::vector<uint8_t>& blocks, uint8_t scale) {
  std::vector<uint8_t> b = blocks, sc = {scale};
  std::vector<uint16_t> out(32, 0xA5A5);
  KernelArgs a;
  a.buffers["blocks"] = {b.data(), b.size()};
  a.buffers["scales"] = {sc.data(), 1};
  a.buffers["dst"] = {out.data(), 64};
  a.scalars = {{"rows", 1}, {"cols", 32}};
  EXPECT_TRUE(RunReference("mxfp4_dequant", a).ok());
  return out;
}

TEST(Dequant, HandComputedValues) {
  std::vector<uint8_t> blocks(16, 0);
  blocks[0] = 0x71;                  // element 0: 0.5, element 1: 6
  blocks[1] = 0x89;                  // element 2: -0.5, element 3: -0
  blocks[2] = 0x02;                  // element 4: 1
  auto v = DequantRow(blocks, 127);  // scale 2^0
  EXPECT_EQ(v[0], 0x3F00);           // 0.5
  EXPECT_EQ(v[1], 0x40C0);           // 6
  EXPECT_EQ(v[2], 0xBF00);           // -0.5
  EXPECT_EQ(v[3], 0x8000);           // -0
  EXPECT_EQ(v[4], 0x3F80);           // 1
  EXPECT_EQ(v[31], 0x0000);
  v = DequantRow(blocks, 128);   // 2^1
  EXPECT_EQ(v[4], 0x4000);       // 2
  v = DequantRow(blocks, 254);   // 2^127
  EXPECT_EQ(v[4], 0x7F00);       // 2^127
  EXPECT_EQ(v[1], 0x7F80);       // 6 * 2^127 overflows: infinity
  v = DequantRow(blocks, 0);     // 2^-127
  EXPECT_EQ(v[0], 0x0020);       // 2^-128: subnormal 32 * 2^-133
  EXPECT_EQ(v[4], 0x0040);       // 2^-127: subnormal 64 * 2^-133
  EXPECT_EQ(v[1], 0x0140);       // 6 * 2^-127 = 1.5 * 2^-125: normal
  v = DequantRow(blocks, 0xFF);  // NaN scale
  EXPECT_EQ(v[0], 0x7FC0);
  EXPECT_EQ(v[31], 0x7FC0);
}

TEST(Dequant, ReferenceEqualsFieldConstructionForEveryCode) {
  // The CPU reference computes in double; the CUDA kernel builds the bits from
  // fields (recipe.h). All 16 x 256 element/scale codes agree.
  for (uint32_t s = 0; s < 256; ++s) {
    std::vector<uint8_t> blocks(16);
    for (int b = 0; b < 8; ++b) blocks[b] = static_cast<uint8_t>((2 * b) | (2 * b + 1) << 4);
    const auto v = DequantRow(blocks, static_cast<uint8_t>(s));
    for (uint32_t nib = 0; nib < 16; ++nib)
      ASSERT_EQ(v[nib], Mxfp4ToBf16Bits(nib, s)) << nib << " " << s;
  }
}

// A refused call returns an error naming the kernel and leaves dst untouched;
// the GPU launch refuses the same call before touching the device.
void ExpectRefused(const std::string& k, const KernelArgs& args) {
  const Status s = RunReference(k, args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind(k, 0), 0u) << s.message();
  const Status g = LaunchDerive(k, args, nullptr);
  EXPECT_FALSE(g.ok());
  EXPECT_EQ(g.message(), s.message());
}

struct Bufs {
  std::vector<uint8_t> src = RandomBytes(1 << 16, 9);
  std::vector<uint8_t> dst = std::vector<uint8_t>(1 << 17, 0xA5);
  KernelArgs Args(const Scalars& s) {
    return testing::MakeArgs(src.data(), src.size(), dst.data(), dst.size(), s);
  }
  bool Untouched() const {
    return std::all_of(dst.begin(), dst.end(), [](uint8_t b) { return b == 0xA5; });
  }
};

TEST(Refusals, BadScalarsAndBindings) {
  Bufs b;
  const Scalars ok = {{"experts", 1}, {"rows", 192}, {"cols", 48}, {"i_pad", 128}, {"k_pad", 128}};
  const auto with = [&](const char* n, int64_t v) {
    Scalars s = ok;
    s[n] = v;
    return s;
  };
  const std::string k = "mxfp4_fc1_weight";
  ExpectRefused(k, b.Args(with("i_pad", 100)));               // not a multiple of 128
  ExpectRefused(k, b.Args(with("k_pad", 192)));               // not a multiple of 128
  ExpectRefused(k, b.Args(with("rows", 191)));                // odd: not 2I
  ExpectRefused(k, b.Args(with("rows", 258)));                // I = 129 > i_pad
  ExpectRefused(k, b.Args(with("cols", 65)));                 // > k_pad/2
  ExpectRefused(k, b.Args(with("experts", -1)));              // negative
  ExpectRefused(k, b.Args(with("experts", 70000)));           // over the grid limit
  ExpectRefused(k, b.Args(with("i_pad", int64_t{1} << 40)));  // rows over 2^31
  Scalars missing = ok;
  missing.erase("cols");
  ExpectRefused(k, b.Args(missing));
  ExpectRefused(k, b.Args(with("n", 4)));  // not a parameter
  KernelArgs scalar_as_buffer = b.Args(missing);
  scalar_as_buffer.buffers["cols"] = {b.src.data(), 4};
  ExpectRefused(k, scalar_as_buffer);
  ExpectRefused("mxfp4_fc3_weight", b.Args(ok));
  ExpectRefused(
      "mxfp4_fc2_scales",
      b.Args({{"experts", 1}, {"rows", 129}, {"cols", 3}, {"h_pad", 128}, {"i_pad", 128}}));
  ExpectRefused(
      "mxfp4_fc2_scales",
      b.Args({{"experts", 1}, {"rows", 128}, {"cols", 5}, {"h_pad", 128}, {"i_pad", 128}}));
  EXPECT_TRUE(b.Untouched());
}

TEST(Refusals, BuffersTooSmallNullOrOverlapping) {
  Bufs b;
  const Scalars s = {{"experts", 2}, {"rows", 192}, {"cols", 48}, {"i_pad", 128}, {"k_pad", 128}};
  const std::string k = "mxfp4_fc1_weight";
  const uint64_t src_bytes = 2 * 192 * 48, dst_bytes = DstBytes(k, s);
  ExpectRefused(k, testing::MakeArgs(b.src.data(), src_bytes - 1, b.dst.data(), dst_bytes, s));
  ExpectRefused(k, testing::MakeArgs(b.src.data(), src_bytes, b.dst.data(), dst_bytes - 1, s));
  ExpectRefused(k, testing::MakeArgs(nullptr, src_bytes, b.dst.data(), dst_bytes, s));
  ExpectRefused(
      k, testing::MakeArgs(b.dst.data() + dst_bytes - 1, src_bytes, b.dst.data(), dst_bytes, s));
  ExpectRefused("cast_bf16_f32",
                testing::MakeArgs(b.src.data(), 99, b.dst.data(), 200, {{"n", 50}}));
  ExpectRefused("copy", testing::MakeArgs(b.src.data(), 10, b.dst.data(), 10,
                                          {{"n", std::numeric_limits<int64_t>::max()}}));
  KernelArgs dq =
      testing::MakeArgs(b.src.data(), 0, b.dst.data(), 128, {{"rows", 2}, {"cols", 32}});
  dq.buffers.erase("src");
  dq.buffers["blocks"] = {b.src.data(), 32};
  dq.buffers["scales"] = {b.src.data() + 32, 2};
  EXPECT_TRUE(RunReference("mxfp4_dequant", dq).ok());
  std::fill(b.dst.begin(), b.dst.end(), 0xA5);
  dq.scalars["cols"] = 48;  // not a multiple of 32
  ExpectRefused("mxfp4_dequant", dq);
  dq.scalars["cols"] = 32;
  dq.buffers["scales"] = {b.src.data() + 32, 1};  // too small
  ExpectRefused("mxfp4_dequant", dq);
  dq.buffers["scales"] = {b.dst.data() + 100, 2};  // overlaps dst
  ExpectRefused("mxfp4_dequant", dq);
  EXPECT_TRUE(b.Untouched());
  // The exact sizes pass; a zero-sized call is a no-op.
  EXPECT_TRUE(
      RunReference(k, testing::MakeArgs(b.src.data(), src_bytes, b.dst.data(), dst_bytes, s)).ok());
  EXPECT_TRUE(RunReference("copy", testing::MakeArgs(nullptr, 0, nullptr, 0, {{"n", 0}})).ok());
}

}  // namespace
}  // namespace loadplan::kernels
