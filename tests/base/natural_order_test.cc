#include "base/natural_order.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace loadplan::base {
namespace {

TEST(NaturalOrder, NumbersCompareByValue) {
  std::vector<std::string> v = {"derive.l10.fc1", "derive.l2.fc1", "derive.l1.fc2", "derive.l1.fc1",
                                "derive.l19.fc1", "derive.l9.fc1", "derive.l0.fc1"};
  std::sort(v.begin(), v.end(), NaturalLess);
  EXPECT_EQ(v, (std::vector<std::string>{"derive.l0.fc1", "derive.l1.fc1", "derive.l1.fc2",
                                         "derive.l2.fc1", "derive.l9.fc1", "derive.l10.fc1",
                                         "derive.l19.fc1"}));
}

TEST(NaturalOrder, IsAStrictTotalOrderOnDistinctNames) {
  EXPECT_TRUE(NaturalLess("l02", "l2"));  // equal in value: the bytes decide
  EXPECT_FALSE(NaturalLess("l2", "l02"));
  EXPECT_FALSE(NaturalLess("l2", "l2"));
  EXPECT_TRUE(NaturalLess("l", "l0"));
  EXPECT_TRUE(NaturalLess("a9", "a10b"));
  EXPECT_TRUE(NaturalLess("x99999999999999999999999", "x100000000000000000000000"));  // no overflow
  EXPECT_TRUE(NaturalLess("a.b", "a0"));  // '.' < '0' byte for byte
}

}  // namespace
}  // namespace loadplan::base
