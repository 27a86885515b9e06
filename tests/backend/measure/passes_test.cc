// OnThreads: every thread runs its own t, the first failure by thread order comes back;
// MedianOfThree: the warm-up left out, the median of the rest, a failure at any pass returned.
#include "backend/measure/passes.h"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace loadplan::backend {
namespace {

TEST(Passes, EveryThreadRunsItsOwnIndexAndTheFirstFailureComesBack) {
  std::vector<std::atomic<int>> ran(5);
  EXPECT_TRUE(OnThreads(5, [&](uint32_t t) {
                ++ran[t];
                return base::Status::Ok();
              }).ok());
  for (const std::atomic<int>& r : ran) EXPECT_EQ(r.load(), 1);
  const base::Status st = OnThreads(4, [](uint32_t t) {
    return t >= 2 ? base::Status::Error("thread " + std::to_string(t), base::ErrorKind::kIo)
                  : base::Status::Ok();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "thread 2");
  EXPECT_EQ(st.kind(), base::ErrorKind::kIo);
}

TEST(Passes, TheMedianOfThreeLeavesTheWarmUpOut) {
  const std::vector<double> seconds = {100, 3, 1, 2};
  size_t k = 0;
  const base::Result<double> m =
      MedianOfThree([&]() -> base::Result<double> { return seconds[k++]; });
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, 2);
  EXPECT_EQ(k, 4u);
  k = 0;
  const base::Result<double> failed = MedianOfThree([&]() -> base::Result<double> {
    if (k++ == 2) return base::Status::Error("pass 3", base::ErrorKind::kIo);
    return 1.0;
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "pass 3");
  EXPECT_EQ(k, 3u);  // no pass after the failure
}

}  // namespace
}  // namespace loadplan::backend
