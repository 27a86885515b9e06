// plan --fit: every configuration planned, the fitting ones ranked by predicted time, the
// boundary exact (a peak equal to SIZE fits, one byte less does not).
#include "simulator/timing/fit.h"

#include <algorithm>
#include <optional>

#include <gtest/gtest.h>

#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::simulator::timing {
namespace {

verifier::Manifest Seq() {
  testing::ManifestMaker mk("seq", 1, 0);
  for (int i = 0; i < 6; ++i) {  // more calls than prefetch 2 keeps live at once
    mk.Bytes(fmt::format("s{}", i), verifier::BufferKind::kSource, 3000 + 1000 * i)
        .Bytes(fmt::format("x{}", i), verifier::BufferKind::kCarry, 4000)
        .Call("derive.p", {fmt::format("s{}", i)}, {fmt::format("x{}", i)});
  }
  return mk.Done();
}

MachineProfile Slow() {
  MachineProfile p = DefaultH200Profile();
  p.pipeline_hot = 1e6;
  p.pinned_h2d = 2e6;
  p.page_cache_read = 4e6;
  p.chunk_bytes = 1000;
  p.default_kernel_rate = 2e6;
  p.kernels.clear();
  return p;
}

FitResult Search(uint64_t size, std::optional<uint32_t> own_lanes = std::nullopt,
                 std::optional<uint32_t> own_prefetch = std::nullopt) {
  const verifier::VerifiedManifest v = test_support::MustVerify(Seq());
  return FitSearch(v, Slow(),
                   {.size = size,
                    .base = {.alignment = 1, .granularity = 1},
                    .own_lanes = own_lanes,
                    .own_prefetch = own_prefetch});
}

TEST(Fit, EveryConfigurationIsPlannedAndTheFittingOnesAreRankedByTime) {
  const FitResult r = Search(UINT64_MAX);
  EXPECT_EQ(r.ranked.size(), 4u * (3 * 4 + 1));
  EXPECT_EQ(r.fitting, r.ranked.size());
  ASSERT_NE(r.choice(), nullptr);
  for (size_t i = 1; i < r.fitting; ++i)
    EXPECT_LE(r.ranked[i - 1].prediction.total_s, r.ranked[i].prediction.total_s);
  EXPECT_EQ(r.choice(), &r.ranked[0]);
  EXPECT_EQ(r.fastest()->prediction.total_s, r.choice()->prediction.total_s);
  // With derive as slow as the copies, prefetch 0 serialises them: not the choice.
  EXPECT_NE(r.choice()->options.prefetch.value_or(0), 0u);
}

TEST(Fit, TheSmallestPeakIsTheBoundary) {
  const uint64_t least = Search(UINT64_MAX).smallest()->load_peak;
  const FitResult at = Search(least);
  ASSERT_NE(at.choice(), nullptr);
  for (size_t i = 0; i < at.fitting; ++i) EXPECT_EQ(at.ranked[i].load_peak, least);
  for (size_t i = at.fitting; i < at.ranked.size(); ++i) EXPECT_GT(at.ranked[i].load_peak, least);

  const FitResult below = Search(least - 1);
  EXPECT_EQ(below.choice(), nullptr);
  EXPECT_EQ(below.fitting, 0u);
  EXPECT_EQ(below.smallest()->load_peak, least);
  const nlohmann::json j = FitJson(below, Slow());
  EXPECT_EQ(j["needs_bytes"], 1u);
  EXPECT_TRUE(j["choice"].is_null());
  EXPECT_NE(FitText(below, Slow()).find("nothing fits"), std::string::npos);
}

TEST(Fit, NaiveIsRankedOnlyWhenItFits) {
  const FitResult all = Search(UINT64_MAX);
  uint64_t naive_peak = 0, staged_max = 0;
  for (const FitCandidate& c : all.ranked) {
    if (c.options.naive)
      naive_peak = std::max(naive_peak, c.load_peak);
    else
      staged_max = std::max(staged_max, c.load_peak);
  }
  ASSERT_GT(naive_peak, staged_max);  // the naive plan holds every source at once
  const FitResult r = Search(staged_max);
  for (size_t i = 0; i < r.fitting; ++i) EXPECT_FALSE(r.ranked[i].options.naive);
  EXPECT_EQ(r.fitting, 4u * 3 * 4);
}

// The manifest's own lanes and prefetch are searched beside the grid's and, where the model
// predicts them no slower (lanes never change its prediction), chosen over a smaller peak;
// slower, they are not.
TEST(Fit, TheManifestsOwnOptionsWinAmongEqualPredictions) {
  const FitResult plain = Search(UINT64_MAX);
  ASSERT_NE(plain.choice(), nullptr);
  const PlanOptions best = plain.choice()->options;  // lanes 1 (fewest among equals)
  ASSERT_EQ(best.lanes, 1u);
  // The manifest's 16 lanes, at the fastest prefetch: searched, predicted as fast, chosen.
  const FitResult r = Search(UINT64_MAX, 16, best.prefetch);
  EXPECT_EQ(r.ranked.size(), 5u * (3 * 4 + 1));  // lanes 1, 2, 4, 8 and the manifest's 16
  ASSERT_NE(r.choice(), nullptr);
  EXPECT_TRUE(r.choice()->own) << r.choice()->Label();
  EXPECT_EQ(r.choice()->options.lanes, 16u);
  EXPECT_EQ(r.choice()->options.prefetch, best.prefetch);
  EXPECT_EQ(r.choice()->prediction.total_s, plain.choice()->prediction.total_s);
  EXPECT_NE(r.choice()->Label().find("(the manifest's)"), std::string::npos);
  // Prefetch 0 serialises the calls here: slower, so not chosen for being the manifest's.
  const FitResult slow = Search(UINT64_MAX, 1, 0);
  ASSERT_NE(slow.choice(), nullptr);
  EXPECT_FALSE(slow.choice()->own) << slow.choice()->Label();
  EXPECT_EQ(slow.choice()->prediction.total_s, plain.choice()->prediction.total_s);
  size_t own = 0;
  for (const FitCandidate& c : slow.ranked) own += c.own ? 1 : 0;
  EXPECT_EQ(own, 4u);  // the four policies on lanes 1, prefetch 0
}

}  // namespace
}  // namespace loadplan::simulator::timing
