// The CPU references (the docs/kernels.md recipe steps done literally) against the composed
// one-pass gather the CUDA kernels use (kernels/recipe.h): every destination
// byte is traced back to its source byte by probing with position codes, so
// each source byte must land exactly once and every other byte is a 0 pad.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/recipe.h"
#include "kernels/reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using testing::DstBytes;
using testing::RunRef;
using testing::Scalars;
using testing::Square;
using testing::SrcBytes;

constexpr int64_t kUnset = -2;

struct Geometry {
  bool fc1 = false, scales = false;
  int64_t experts = 0, rows = 0, cols = 0, out_rows = 0, out_cols = 0;
};

Geometry GeometryOf(const std::string& k, const Scalars& s) {
  Geometry g;
  g.fc1 = k.find("fc1") != std::string::npos;
  g.scales = k.find("scales") != std::string::npos;
  g.experts = s.at("experts");
  g.rows = s.at("rows");
  g.cols = s.at("cols");
  g.out_rows = g.fc1 ? 2 * s.at("i_pad") : s.at("h_pad");
  g.out_cols = (g.fc1 ? s.at("k_pad") : s.at("i_pad")) / (g.scales ? 32 : 2);
  return g;
}

// For each dst byte of a weight/scales kernel, the src byte it must hold (or -1:
// padding), from recipe.h's composed gather; kUnset where nothing maps.
std::vector<int64_t> ComposedSources(const std::string& k, const Scalars& s) {
  const Geometry g = GeometryOf(k, s);
  std::vector<int64_t> want(DstBytes(k, s), kUnset);
  const int64_t per_expert = g.out_rows * g.out_cols;
  for (int64_t e = 0; e < g.experts; ++e) {
    for (int64_t r = 0; r < g.out_rows; ++r) {
      const int32_t row = SourceRow(g.fc1, static_cast<int32_t>(r), static_cast<int32_t>(g.rows));
      for (int64_t j = 0; j < g.out_cols; ++j) {
        const int64_t at = g.scales
                               ? SwizzleOffset(static_cast<int32_t>(r), static_cast<int32_t>(j),
                                               static_cast<int32_t>(g.out_cols))
                               : r * g.out_cols + j;
        want[e * per_expert + at] =
            (row == kPadRow || j >= g.cols) ? -1 : (e * g.rows + row) * g.cols + j;
      }
    }
  }
  return want;
}

// The src byte each dst byte holds after the reference ran (-1: a 0 pad), found
// by three runs with the bytes of (position + 1) as input.
std::vector<int64_t> ProbedSources(const std::string& k, const Scalars& s) {
  const uint64_t n = SrcBytes(k, s);
  EXPECT_LT(n, uint64_t{1} << 24);
  std::vector<int64_t> got(DstBytes(k, s), 0);
  for (int t = 0; t < 3; ++t) {
    std::vector<uint8_t> src(n);
    for (uint64_t p = 0; p < n; ++p) src[p] = static_cast<uint8_t>((p + 1) >> (8 * t));
    const auto r = RunRef(k, s, src);
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    for (size_t o = 0; o < got.size(); ++o) got[o] |= int64_t{r.dst[o]} << (8 * t);
  }
  for (int64_t& v : got) v -= 1;
  return got;
}

void ExpectPermutation(const std::string& k, const Scalars& s) {
  const std::vector<int64_t> got = ProbedSources(k, s);
  const std::vector<int64_t> want = ComposedSources(k, s);
  ASSERT_EQ(std::count(want.begin(), want.end(), kUnset), 0)
      << "composed gather leaves bytes unmapped";
  std::vector<int> seen(SrcBytes(k, s), 0);
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o], want[o]) << k << " dst byte " << o;
    if (got[o] >= 0) ++seen[static_cast<size_t>(got[o])];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }))
      << "a source byte lost";
}

const std::vector<std::string> kByteKernels = {"mxfp4_fc1_weight", "mxfp4_fc1_scales",
                                               "mxfp4_fc2_weight", "mxfp4_fc2_scales"};

TEST(Recipe, EverySourceByteLandsOnceSmallShapes) {
  for (const std::string& k : kByteKernels) {
    SCOPED_TRACE(k);
    ExpectPermutation(k, Square(k, 2, 96, 128));
    ExpectPermutation(k, Square(k, 3, 200, 256));
    ExpectPermutation(k, Square(k, 1, 2, 128));    // I = 1: almost all padding
    ExpectPermutation(k, Square(k, 1, 128, 128));  // no padding rows
    ExpectPermutation(k, Square(k, 2, 0, 128));    // all padding
  }
}

TEST(Recipe, EverySourceByteLandsOnceGptOssExpert) {
  for (const std::string& k : kByteKernels) ExpectPermutation(k, testing::GptOss(k, 1));
}

TEST(Recipe, BiasRowsFollowTheWeightRows) {
  for (const bool fc1 : {true, false}) {
    const std::string k = fc1 ? "mxfp4_fc1_bias" : "mxfp4_fc2_bias";
    const int64_t experts = 2, rows = fc1 ? 400 : 200, pad = 256, out_rows = fc1 ? 2 * pad : pad;
    const Scalars s = {{"experts", experts}, {"rows", rows}, {fc1 ? "i_pad" : "h_pad", pad}};
    std::vector<uint8_t> src(SrcBytes(k, s));
    for (int64_t p = 0; p < experts * rows; ++p) {
      const auto code = static_cast<uint16_t>(p + 1);
      std::memcpy(&src[2 * p], &code, 2);
    }
    const auto r = RunRef(k, s, src);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    for (int64_t e = 0; e < experts; ++e) {
      for (int64_t row = 0; row < out_rows; ++row) {
        uint32_t bits = 0;
        std::memcpy(&bits, &r.dst[4 * (e * out_rows + row)], 4);
        const int32_t from = SourceRow(fc1, static_cast<int32_t>(row), static_cast<int32_t>(rows));
        ASSERT_EQ(bits, from == kPadRow ? 0u : static_cast<uint32_t>(e * rows + from + 1) << 16)
            << k << " " << row;
      }
    }
  }
}

// Random shapes and random bytes: the literal steps equal the composed gather.
RC_GTEST_PROP(Recipe, ReferenceEqualsComposedGather, ()) {
  const std::string k = *rc::gen::elementOf(kByteKernels);
  const int64_t n = *rc::gen::inRange<int64_t>(0, 300);
  const int64_t pad = (n + 127) / 128 * 128 + 128 * *rc::gen::inRange<int64_t>(0, 2);
  Scalars s = Square(k, *rc::gen::inRange<int64_t>(1, 4), n, std::max<int64_t>(pad, 128));
  const std::vector<uint8_t> src =
      testing::RandomBytes(SrcBytes(k, s), *rc::gen::arbitrary<uint64_t>());
  const auto r = RunRef(k, s, src, 16);
  RC_ASSERT(r.status.ok());
  const std::vector<int64_t> want = ComposedSources(k, s);
  for (size_t o = 0; o < want.size(); ++o) {
    RC_ASSERT(r.dst[o] == (want[o] < 0 ? 0 : src[static_cast<size_t>(want[o])]));
  }
  RC_ASSERT(std::all_of(r.dst.end() - 16, r.dst.end(), [](uint8_t b) { return b == 0xA5; }));
}

}  // namespace
}  // namespace loadplan::kernels
