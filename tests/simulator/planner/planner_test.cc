// Tests of the load planner: derive order, windows, lanes, offsets, steps and wait edges;
// properties: plans pass the plan checker, arena >= lower bound, determinism.
#include "simulator/planner/planner.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "simulator/check/plan_check.h"
#include "simulator/phases/phases.h"
#include "simulator/plan_totals.h"
#include "verifier/derive_order.h"
#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::simulator {
namespace {

using testing::ManifestMaker;
using verifier::BufferKind;

// derive.consumer reads carry x that derive.producer writes: the name order is wrong,
// the dataflow order puts the producer first. d is a source nothing reads; u a weight
// no derive call reads.
verifier::Manifest Chain(uint32_t lanes = 2, uint32_t prefetch = 0) {
  return ManifestMaker("chain", lanes, prefetch)
      .Bytes("a", BufferKind::kSource, 1000)
      .Bytes("b", BufferKind::kSource, 3000)
      .Bytes("c", BufferKind::kSource, 500)
      .Bytes("d", BufferKind::kSource, 64)
      .Bytes("u", BufferKind::kWeight, 50)
      .Bytes("w", BufferKind::kWeight, 100)
      .Bytes("x", BufferKind::kCarry, 700)
      .Bytes("y", BufferKind::kCarry, 300)
      .Bytes("z", BufferKind::kCarry, 256)
      .Call("derive.producer", {"a", "w"}, {"x"})
      .Call("derive.producer", {"a", "b"}, {"z"})
      .Call("derive.consumer", {"c", "x"}, {"y"})
      .Done();
}

// Plan takes a VerifiedManifest: every manifest of these tests verifies.
LoadPlan Plan(const verifier::Manifest& m, const PlanOptions& o = {}) {
  return test_support::PlanOf(m, o);
}

uint32_t Index(const LoadPlan& p, std::string_view name) {
  for (uint32_t i = 0; i < p.buffers.size(); ++i) {
    if (p.buffers[i].name == name) return i;
  }
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}
BufferId Id(const LoadPlan& p, std::string_view name) { return BufferId{Index(p, name)}; }

TEST(Planner, ProducerRunsBeforeConsumer) {
  const LoadPlan p = Plan(Chain());
  EXPECT_EQ(p.derive_order, (std::vector<std::string>{"derive.producer", "derive.consumer"}));
  ASSERT_EQ(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[0].program, "derive.producer");
  EXPECT_EQ(p.calls[1].call_in_program, 1u);
  EXPECT_EQ(p.calls[2].id, CallId{2});
  EXPECT_EQ(p.calls[2].kernel, "k_r2_w1");
  ASSERT_EQ(p.calls[2].args.size(),
            3u);  // r00 = c, r01 = x, w00 = y, each with its extent in bytes
  EXPECT_EQ(p.calls[2].args[0].buffer, Id(p, "c"));
  EXPECT_EQ(p.calls[2].args[2].access, verifier::Access::kWrite);
  EXPECT_EQ(p.calls[2].program, "derive.consumer");
  EXPECT_EQ(p.calls[2].ptr, "/programs/derive.consumer/calls/0");
  EXPECT_EQ(p.calls[2].reads, (std::vector<BufferId>{Id(p, "c"), Id(p, "x")}));
}

TEST(Planner, WindowsArrivalAndLanes) {
  const LoadPlan p = Plan(Chain());
  const PlannedBuffer& a = p.buffer(Id(p, "a"));
  EXPECT_EQ(std::tie(a.first_reader, a.last_reader, a.window_begin, a.window_end),
            std::tuple(CallId{0}, CallId{1}, ClockTime{0}, ClockTime{2}));
  const PlannedBuffer& c = p.buffer(Id(p, "c"));
  EXPECT_EQ(std::tie(c.window_begin, c.window_end), std::tuple(ClockTime{2}, ClockTime{3}));
  EXPECT_EQ(p.arrival, (std::vector<BufferId>{Id(p, "a"), Id(p, "b"), Id(p, "c")}));
  EXPECT_EQ(a.lane, Lane{0});
  EXPECT_EQ(p.buffer(Id(p, "b")).lane, Lane{1});
  EXPECT_EQ(c.lane, Lane{0});
  EXPECT_EQ(p.buffer(Id(p, "d")).residence, Residence::kSkipped);
  EXPECT_EQ(p.buffer(Id(p, "w")).lane, Lane{0});
  EXPECT_EQ(p.buffer(Id(p, "u")).lane, Lane{1});
}

TEST(Planner, PrefetchOpensWindowsEarly) {
  const LoadPlan p = Plan(Chain(), PlanOptions{.prefetch = 1});
  EXPECT_EQ(p.prefetch, 1u);
  const PlannedBuffer& b = p.buffer(Id(p, "b"));
  EXPECT_EQ(std::tie(b.window_begin, b.window_end), std::tuple(ClockTime{0}, ClockTime{2}));
  const PlannedBuffer& c = p.buffer(Id(p, "c"));
  EXPECT_EQ(std::tie(c.window_begin, c.window_end), std::tuple(ClockTime{1}, ClockTime{3}));
  EXPECT_TRUE(CheckPlan(Chain(), p).empty());
}

TEST(Planner, OffsetsSizesAndRounding) {
  const LoadPlan p = Plan(Chain());
  EXPECT_EQ(p.buffer(Id(p, "a")).offset, 0u);
  EXPECT_EQ(p.buffer(Id(p, "b")).offset, 1024u);  // a is live: first fit above it
  EXPECT_EQ(p.buffer(Id(p, "c")).offset, 0u);     // a's window ended: its bytes reused
  EXPECT_EQ(p.arena_bytes, 4096u);
  EXPECT_EQ(p.lower_bound, 4096u);
  EXPECT_EQ(p.arena_bytes_rounded, 2u << 20);
  // Pool in name order: u w x y z, each aligned to 256.
  EXPECT_EQ(p.buffer(Id(p, "u")).offset, 0u);
  EXPECT_EQ(p.buffer(Id(p, "w")).offset, 256u);
  EXPECT_EQ(p.buffer(Id(p, "x")).offset, 512u);
  EXPECT_EQ(p.buffer(Id(p, "y")).offset, 1280u);
  EXPECT_EQ(p.buffer(Id(p, "z")).offset, 1792u);
  EXPECT_EQ(p.resident_bytes, 2048u);
  EXPECT_EQ(p.resident_bytes_rounded, 2u << 20);
  const LoadPlan q = Plan(Chain(), PlanOptions{.alignment = 1, .granularity = 1000});
  EXPECT_EQ(q.arena_bytes, 4000u);
  EXPECT_EQ(q.arena_bytes_rounded, 4000u);
  EXPECT_EQ(q.resident_bytes, 1406u);
  EXPECT_EQ(q.resident_bytes_rounded, 2000u);
}

Step S(StepKind k, std::optional<uint32_t> buffer, std::optional<uint32_t> call,
       std::optional<uint32_t> lane, const std::vector<uint32_t>& waits) {
  Step s{.kind = k};
  if (buffer) s.buffer = BufferId{*buffer};
  if (call) s.call = CallId{*call};
  if (lane) s.lane = Lane{*lane};
  for (uint32_t w : waits) s.waits.push_back(StepIndex{w});
  return s;
}

TEST(Planner, StepsAndWaitEdges) {
  const LoadPlan p = Plan(Chain());
  const uint32_t a = Index(p, "a"), b = Index(p, "b"), c = Index(p, "c"), u = Index(p, "u"),
                 w = Index(p, "w");
  const std::vector<Step> want = {
      S(StepKind::kAllocResident, {}, {}, {}, {}),
      S(StepKind::kAllocArena, {}, {}, {}, {}),
      S(StepKind::kFill, a, {}, 0, {}),         // 2
      S(StepKind::kFill, w, {}, 0, {2}),        // 3: lane 0's previous fill
      S(StepKind::kLaunch, {}, 0, {}, {2, 3}),  // 4
      S(StepKind::kFill, b, {}, 1, {}),         // 5
      S(StepKind::kLaunch, {}, 1, {}, {2, 5}),  // 6
      S(StepKind::kRelease, a, {}, {}, {6}),    // 7
      S(StepKind::kRelease, b, {}, {}, {6}),    // 8
      S(StepKind::kFill, c, {}, 0, {3, 6}),     // 9: lane order; a's bytes, last read by 6
      S(StepKind::kLaunch, {}, 2, {}, {4, 9}),  // 10: x's writer, c's fill
      S(StepKind::kRelease, c, {}, {}, {10}),   // 11
      S(StepKind::kFreeArena, {}, {}, {}, {6, 10}),
      S(StepKind::kFill, u, {}, 1, {5}),  // a weight no derive call reads: last
  };
  EXPECT_EQ(p.steps, want);
}

TEST(Planner, PinnedLaneKeepsRoundRobin) {
  const verifier::Manifest m = ManifestMaker("pins", 3, 0)
                                   .Bytes("a", BufferKind::kSource, 10)
                                   .Bytes("b", BufferKind::kSource, 10, 2)
                                   .Bytes("c", BufferKind::kSource, 10)
                                   .Bytes("x", BufferKind::kCarry, 10)
                                   .Call("derive.p", {"a", "b", "c"}, {"x"})
                                   .Done();
  const LoadPlan p = Plan(m);
  EXPECT_EQ(p.buffer(Id(p, "a")).lane, Lane{0});
  EXPECT_EQ(p.buffer(Id(p, "b")).lane, Lane{2});
  EXPECT_EQ(p.buffer(Id(p, "c")).lane, Lane{1});
  EXPECT_EQ(Plan(m, PlanOptions{.lanes = 2}).buffer(Id(p, "b")).lane, Lane{0});  // pin modulo lanes
}

TEST(Planner, VariableCarryUsesItsMaximum) {
  const verifier::Manifest m =
      ManifestMaker("var")
          .Var("n", 2, 10)
          .Buffer("k", BufferKind::kCarry, {verifier::Expr::Var("n"), verifier::Expr::Const(100)})
          .Done();
  const LoadPlan p = Plan(m);
  EXPECT_EQ(p.buffers[0].bytes, 1000u);
  EXPECT_EQ(p.buffers[0].shape, std::nullopt);  // variable: the plan holds no fixed shape
  EXPECT_EQ(p.resident_bytes, 1024u);
  EXPECT_TRUE(CheckPlan(m, p).empty());
}

// A `tensors` binding is a read like a `tensor` one: the planned buffer carries the list (in
// its order) and the steps, windows and offsets are those of the single-tensor manifest.
TEST(Planner, TensorListsAreCarriedAndPlannedLikeOneTensor) {
  verifier::Manifest m = Chain();
  for (verifier::Buffer& b : m.buffers) {
    if (b.name != "b" && b.name != "u") continue;
    b.tensors = std::vector<std::string>{*b.tensor + ".1", *b.tensor + ".0"};
    b.tensor.reset();
  }
  const LoadPlan p = Plan(m);
  const LoadPlan one = Plan(Chain());
  EXPECT_EQ(p.buffer(Id(p, "b")).tensors,
            (std::vector<std::string>{*one.buffer(Id(one, "b")).tensor + ".1",
                                      *one.buffer(Id(one, "b")).tensor + ".0"}));
  EXPECT_FALSE(p.buffer(Id(p, "b")).tensor.has_value());
  EXPECT_TRUE(p.buffer(Id(p, "u")).tensors.has_value());
  EXPECT_EQ(p.steps, one.steps);
  EXPECT_EQ(p.arena_bytes, one.arena_bytes);
  EXPECT_EQ(p.resident_bytes, one.resident_bytes);
  EXPECT_TRUE(CheckPlan(m, p).empty());
  EXPECT_FALSE(CheckPlan(Chain(), p).empty());  // the plan's list is not the manifest's tensor
}

TEST(Planner, NoDeriveCallsStillAllocatesAndFills) {
  const verifier::Manifest m = ManifestMaker("plain").Bytes("w", BufferKind::kWeight, 10).Done();
  const LoadPlan p = Plan(m);
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[2].kind, StepKind::kFreeArena);
  EXPECT_EQ(p.steps[3].kind, StepKind::kFill);
  EXPECT_EQ(p.arena_bytes, 0u);
  EXPECT_TRUE(CheckPlan(m, p).empty());
}

PlanOptions RandomOptions() {
  PlanOptions o;
  if (*rc::gen::arbitrary<bool>()) o.lanes = *rc::gen::inRange<uint32_t>(1, 6);
  if (*rc::gen::arbitrary<bool>()) o.prefetch = *rc::gen::inRange<uint32_t>(0, 5);
  o.placement = *rc::gen::element(PlacementPolicy::kFirstFit, PlacementPolicy::kBestFit,
                                  PlacementPolicy::kBest);
  o.alignment = *rc::gen::element<uint64_t>(1, 8, 256);
  o.granularity = *rc::gen::element<uint64_t>(1, 512, 2u << 20);
  return o;
}

RC_GTEST_PROP(PlannerProps, PlansPassTheChecker, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  const PlanOptions o = RandomOptions();
  const LoadPlan p = Plan(m, o);
  const std::vector<PlanViolation> v = CheckPlan(m, p);
  RC_ASSERT(v.empty());
  RC_ASSERT(p.arena_bytes >= p.lower_bound);
  RC_ASSERT(p.arena_bytes_rounded % std::max<uint64_t>(1, o.granularity) == 0);
}

RC_GTEST_PROP(PlannerProps, DeterministicAndIndependentOfInputOrder, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  const PlanOptions o = RandomOptions();
  verifier::Manifest shuffled = m;
  std::mt19937 rng(*rc::gen::arbitrary<uint32_t>());
  std::shuffle(shuffled.buffers.begin(), shuffled.buffers.end(), rng);
  std::shuffle(shuffled.programs.begin(), shuffled.programs.end(), rng);
  std::shuffle(shuffled.kernels.begin(), shuffled.kernels.end(), rng);
  for (verifier::Program& p : shuffled.programs) {
    for (verifier::Call& c : p.calls) std::shuffle(c.args.begin(), c.args.end(), rng);
  }
  // Verify sorts a copy of a model out of name order (hand-built models may be), so the plan is
  // the sorted model's; CheckPlan sorts too, so it checks against either.
  RC_ASSERT(CheckPlan(shuffled, Plan(shuffled, o)).empty());
  RC_ASSERT(Plan(m, o) == Plan(m, o));
  RC_ASSERT(Plan(shuffled, o) == Plan(m, o));
}

RC_GTEST_PROP(PlannerProps, DeriveOrderIsTheVerifiersOrder, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  RC_ASSERT(Plan(m).derive_order == verifier::OrderDerivePrograms(m).order);
}

RC_GTEST_PROP(PlannerProps, NaivePlanHoldsEverySourceAsAWeight, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  const LoadPlan naive = Plan(m, PlanOptions{.naive = true});
  RC_ASSERT(CheckPlan(m, naive).empty());
  RC_ASSERT(naive.arrival.empty());
  RC_ASSERT(naive.arena_bytes == 0u);
  // The naive baseline the report quotes (ComputePhases) is what the naive plan allocates.
  RC_ASSERT(LoadPeakBytes(naive) == ComputePhases(m, Plan(m)).naive_peak);
}

RC_GTEST_PROP(PlannerProps, FirstFitNeverBeatsBestPolicy, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  const LoadPlan first = Plan(m, PlanOptions{.placement = PlacementPolicy::kFirstFit});
  const LoadPlan best = Plan(m, PlanOptions{.placement = PlacementPolicy::kBest});
  RC_ASSERT(best.arena_bytes <= first.arena_bytes);
  RC_ASSERT(best.lower_bound == first.lower_bound);
}

}  // namespace
}  // namespace loadplan::simulator
