// base::RunsOfSlice: the runs of a slice, and (RapidCheck) that the slices of a tensor split
// into ranks along any dimension, put back, cover every byte of the tensor exactly once, each
// rank's runs in increasing order and never overlapping.
#include "base/slice_runs.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <vector>

namespace loadplan::base {
namespace {

TEST(SliceRuns, RowsColumnsAndRefusals) {
  const std::vector<uint64_t> shape = {8, 6};  // BF16: rows of 12 bytes
  EXPECT_EQ(*RunsOfSlice(shape, Dtype::kBF16, 0, 2, 3),
            (SliceRuns{.first = 24, .run_bytes = 36, .count = 1}));
  EXPECT_EQ(*RunsOfSlice(shape, Dtype::kBF16, 1, 4, 2),
            (SliceRuns{.first = 8, .run_bytes = 4, .count = 8, .stride = 12}));
  EXPECT_EQ(RunsOfSlice(shape, Dtype::kBF16, 1, 4, 2)->span(), 7 * 12 + 4u);
  EXPECT_FALSE(RunsOfSlice(shape, Dtype::kBF16, 2, 0, 1).ok());  // no dimension 2
  EXPECT_FALSE(RunsOfSlice(shape, Dtype::kBF16, 1, 5, 2).ok());  // past the extent
  EXPECT_FALSE(RunsOfSlice(shape, Dtype::kBF16, 1, 0, 0).ok());  // empty
  EXPECT_FALSE(RunsOfSlice(std::vector<uint64_t>{3, 3}, Dtype::kF4, 1, 0, 2).ok());  // 12-bit rows
  EXPECT_TRUE(RunsOfSlice(std::vector<uint64_t>{3, 4}, Dtype::kF4, 1, 2, 2).ok());
  const std::vector<uint64_t> huge = {uint64_t{1} << 40, uint64_t{1} << 30};
  EXPECT_FALSE(RunsOfSlice(huge, Dtype::kF32, 1, 0, 1).ok());  // 2^72 bytes
}

RC_GTEST_PROP(SliceRunsProps, RanksPutBackCoverEveryByteOnce, ()) {
  const size_t rank = *rc::gen::inRange<size_t>(1, 5);
  const auto shape =
      *rc::gen::container<std::vector<uint64_t>>(rank, rc::gen::inRange<uint64_t>(1, 7));
  const Dtype dtype = *rc::gen::element(Dtype::kU8, Dtype::kBF16, Dtype::kF32);
  const uint64_t dim = *rc::gen::inRange<uint64_t>(0, rank);
  const uint64_t ranks = *rc::gen::inRange<uint64_t>(1, shape[dim] + 1);
  uint64_t total = DtypeBits(dtype) / 8;
  for (uint64_t d : shape) total *= d;
  std::vector<int> seen(total, 0);
  for (uint64_t r = 0; r < ranks; ++r) {  // rank r: [r * n / ranks, (r + 1) * n / ranks)
    const uint64_t begin = r * shape[dim] / ranks, end = (r + 1) * shape[dim] / ranks;
    if (begin == end) continue;
    const Result<SliceRuns> runs = RunsOfSlice(shape, dtype, dim, begin, end - begin);
    RC_ASSERT(runs.ok());
    RC_ASSERT(runs->count <= 1 || runs->stride >= runs->run_bytes);  // in order, no overlap
    for (uint64_t k = 0; k < runs->count; ++k) {
      for (uint64_t b = 0; b < runs->run_bytes; ++b) ++seen[runs->first + k * runs->stride + b];
    }
  }
  for (int n : seen) RC_ASSERT(n == 1);
}

}  // namespace
}  // namespace loadplan::base
