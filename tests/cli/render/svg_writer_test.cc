// Tests of the SVG writer's pure helpers: byte units, text fitting, label spreading.
#include "cli/render/svg_writer.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace loadplan::render {
namespace {

TEST(PickByteUnitTest, ThePowerOfTwoUnitBelowTheTop) {
  EXPECT_EQ(PickByteUnit(0).name, "B");
  EXPECT_EQ(PickByteUnit(1023).name, "B");
  EXPECT_EQ(PickByteUnit(1024).name, "KiB");
  EXPECT_EQ(PickByteUnit((1ull << 20) - 1).name, "KiB");
  EXPECT_EQ(PickByteUnit(1ull << 20).name, "MiB");
  EXPECT_EQ(PickByteUnit((1ull << 30) - 1).name, "MiB");
  EXPECT_EQ(PickByteUnit(1ull << 30).name, "GiB");
  EXPECT_EQ(PickByteUnit(UINT64_MAX).name, "GiB");
  EXPECT_EQ(PickByteUnit(5).bytes, 1.0);
  EXPECT_EQ(PickByteUnit(5000).bytes, 1024.0);
  EXPECT_EQ(PickByteUnit(5ull << 20).bytes, 1048576.0);
  EXPECT_EQ(PickByteUnit(5ull << 30).bytes, 1073741824.0);
}

TEST(FitTextTest, CutsWithAnEllipsisOnCodePoints) {
  EXPECT_EQ(FitText("abc", 3), "abc");
  EXPECT_EQ(FitText("abcd", 3), "ab\xE2\x80\xA6");
  EXPECT_EQ(FitText("abcd", 1), "");
  EXPECT_EQ(FitText("", 0), "");
  EXPECT_EQ(FitText("\xC3\xA9\xC3\xA9\xC3\xA9", 3), "\xC3\xA9\xC3\xA9\xC3\xA9");  // 3 x é
  EXPECT_EQ(FitText("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xE2\x80\xA6");
}

TEST(SpreadLabelsTest, KeepsFreeLabelsAndSpreadsCrowdedOnesAroundTheirMean) {
  EXPECT_EQ(SpreadLabels({10, 30, 50}, 12), (std::vector<double>{10, 30, 50}));
  EXPECT_EQ(SpreadLabels({100, 100}, 12), (std::vector<double>{94, 106}));
  EXPECT_EQ(SpreadLabels({100, 101}, 12), (std::vector<double>{94.5, 106.5}));
  const std::vector<double> three = SpreadLabels({100, 100, 100, 130}, 12);
  ASSERT_EQ(three.size(), 4u);
  for (size_t i = 1; i < three.size(); ++i) EXPECT_GE(three[i] - three[i - 1], 12 - 1e-9);
  EXPECT_TRUE(SpreadLabels({}, 12).empty());
}

}  // namespace
}  // namespace loadplan::render
