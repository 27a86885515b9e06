// The commands' self-check: a plan or placement the independent checkers reject is refused
// (each violation printed), a valid one passes.
#include "cli/self_check.h"

#include <gtest/gtest.h>

#include "simulator/planner/planner.h"
#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::cli {
namespace {

using simulator::testing::ManifestMaker;
using verifier::BufferKind;

verifier::Manifest TwoSources() {
  return ManifestMaker("two")
      .Bytes("a", BufferKind::kSource, 4096)
      .Bytes("b", BufferKind::kSource, 4096)
      .Bytes("x", BufferKind::kCarry, 4096)
      .Bytes("y", BufferKind::kCarry, 4096)
      .Call("derive.x", {"a", "b"}, {"x"})
      .Call("derive.y", {"b"}, {"y"})
      .Done();
}

TEST(SelfCheck, PlannersPlanPasses) {
  const verifier::Manifest m = TwoSources();
  EXPECT_TRUE(PlanPassesChecker(m, test_support::PlanOf(m), "test"));
}

TEST(SelfCheck, CorruptedPlanIsRefusedWithItsViolations) {
  const verifier::Manifest m = TwoSources();
  simulator::LoadPlan plan = test_support::PlanOf(m);
  for (simulator::PlannedBuffer& b : plan.buffers)
    b.offset = 0;  // both sources live at once: overlap
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(PlanPassesChecker(m, plan, "loadplan plan"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("loadplan plan: internal error: the plan checker rejects the plan"),
            std::string::npos)
      << err;
}

TEST(SelfCheck, PlacementOverlapIsRefused) {
  simulator::PlacementProblem p{.buffers = {{.id = "a", .lower = 0, .upper = 2, .size = 10},
                                            {.id = "b", .lower = 1, .upper = 3, .size = 10}},
                                .alignment = 4};
  EXPECT_TRUE(PlacementPassesChecker(p, {.offsets = {0, 12}, .height = 24}, "place"));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(
      PlacementPassesChecker(p, {.offsets = {0, 8}, .height = 20}, "place"));  // 10 rounds to 12
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("place: internal error"),
            std::string::npos);
}

}  // namespace
}  // namespace loadplan::cli
