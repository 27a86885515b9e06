// Tests of the plan checker on hand-built plans (this test never links the planner):
// a valid plan passes, and each broken variant reports its violation kind.
#include "simulator/check/plan_check.h"

#include <set>

#include <gtest/gtest.h>

#include "tests/simulator/plan_fixtures.h"

namespace loadplan::simulator {
namespace {

using testing::ManifestMaker;
using verifier::BufferKind;

// Buffers (name order): a=0, b=1 sources; w=2 weight; x=3, y=4 carries.
verifier::Manifest Small() {
  return ManifestMaker("small")
      .Bytes("a", BufferKind::kSource, 1000).Bytes("b", BufferKind::kSource, 600)
      .Bytes("w", BufferKind::kWeight, 100).Bytes("x", BufferKind::kCarry, 200)
      .Bytes("y", BufferKind::kCarry, 300)
      .Call("derive.p", {"a", "w"}, {"x"})
      .Call("derive.p", {"b", "x"}, {"y"})
      .Done();
}

PlannedBuffer Source(std::string name, uint64_t bytes, uint32_t t) {
  return PlannedBuffer{.name = std::move(name), .kind = BufferKind::kSource, .residence = Residence::kStaged,
                       .bytes = bytes, .offset = 0, .tensor = {}, .lane = 0u, .first_reader = t,
                       .last_reader = t, .window_begin = t, .window_end = t + 1};
}
PlannedBuffer Resident(std::string name, BufferKind kind, uint64_t bytes, uint64_t offset) {
  return PlannedBuffer{.name = std::move(name), .kind = kind, .residence = Residence::kResident,
                       .bytes = bytes, .offset = offset};
}
Step S(StepKind k, std::optional<uint32_t> buffer, std::optional<uint32_t> call, std::vector<uint32_t> waits) {
  return Step{.kind = k, .buffer = buffer, .call = call,
              .lane = k == StepKind::kFill ? std::optional<uint32_t>(0) : std::nullopt, .waits = std::move(waits)};
}

LoadPlan SmallPlan() {
  LoadPlan p;
  p.manifest_name = "small";
  p.granularity = 4096;
  p.derive_order = {"derive.p"};
  p.calls = {PlannedCall{.program = "derive.p", .index = 0, .ptr = "", .reads = {0, 2}, .writes = {3}},
             PlannedCall{.program = "derive.p", .index = 1, .ptr = "", .reads = {1, 3}, .writes = {4}}};
  p.buffers = {Source("a", 1000, 0), Source("b", 600, 1), Resident("w", BufferKind::kWeight, 100, 0),
               Resident("x", BufferKind::kCarry, 200, 256), Resident("y", BufferKind::kCarry, 300, 512)};
  p.buffers[2].lane = 0;
  p.arrival = {0, 1};
  p.resident_bytes = 1024;
  p.resident_bytes_rounded = 4096;
  p.arena_bytes = 1024;
  p.arena_bytes_rounded = 4096;
  p.lower_bound = 1024;
  p.steps = {S(StepKind::kAllocResident, {}, {}, {}),  // 0
             S(StepKind::kAllocArena, {}, {}, {}),     // 1
             S(StepKind::kFill, 0, {}, {}),            // 2 a
             S(StepKind::kFill, 2, {}, {2}),           // 3 w
             S(StepKind::kLaunch, {}, 0, {2, 3}),      // 4
             S(StepKind::kRelease, 0, {}, {4}),        // 5
             S(StepKind::kFill, 1, {}, {3, 4}),        // 6 b: lane order, a's last reader
             S(StepKind::kLaunch, {}, 1, {4, 6}),      // 7
             S(StepKind::kRelease, 1, {}, {7}),        // 8
             S(StepKind::kFreeArena, {}, {}, {4, 7})}; // 9
  return p;
}

std::set<PlanViolationKind> Kinds(const LoadPlan& p, const verifier::Manifest& m = Small()) {
  std::set<PlanViolationKind> out;
  for (const PlanViolation& v : CheckPlan(m, p)) out.insert(v.kind);
  return out;
}
using K = PlanViolationKind;

TEST(PlanCheck, HandBuiltPlanIsValid) {
  const std::vector<PlanViolation> v = CheckPlan(Small(), SmallPlan());
  for (const PlanViolation& x : v) ADD_FAILURE() << PlanViolationKindName(x.kind) << ": " << x.message;
}

TEST(PlanCheck, TransitiveWaitsAreEnough) {
  LoadPlan p = SmallPlan();
  p.steps[7].waits = {6};  // 6 waits for 4, the writer of x
  EXPECT_EQ(Kinds(p), std::set<K>{});
}

TEST(PlanCheck, BadIndices) {
  LoadPlan p = SmallPlan();
  p.steps[2].waits = {5};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
  p = SmallPlan();
  p.steps[6].buffer = 99;
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
  p = SmallPlan();
  p.steps[6].lane = 1;  // the plan has one lane
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
}

TEST(PlanCheck, BuffersAndCallsMustMatchTheManifest) {
  LoadPlan p = SmallPlan();
  p.buffers[0].bytes = 10;
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});
  p = SmallPlan();
  p.calls[0].reads = {0};  // forgets the weight
  EXPECT_EQ(Kinds(p), std::set<K>{K::kCalls});
}

TEST(PlanCheck, LiveSourcesMustNotShareBytes) {
  LoadPlan p = SmallPlan();
  p.buffers[1].window_begin = 0;  // b prefetched while a lives at the same offset
  EXPECT_TRUE(Kinds(p).contains(K::kOverlap));
  p.buffers[1].offset = 1024;
  p.arena_bytes = 2048;
  p.lower_bound = 2048;
  EXPECT_FALSE(Kinds(p).contains(K::kOverlap));
}

TEST(PlanCheck, WindowsMustCoverReaders) {
  LoadPlan p = SmallPlan();
  p.buffers[1].window_end = 1;
  EXPECT_TRUE(Kinds(p).contains(K::kWindow));
}

TEST(PlanCheck, ArenaMustHoldWhatIsPlaced) {
  LoadPlan p = SmallPlan();
  p.arena_bytes = 512;
  EXPECT_TRUE(Kinds(p).contains(K::kArena));
  p = SmallPlan();
  p.arena_bytes_rounded = 1024;  // not rounded to the 4096 granularity
  EXPECT_EQ(Kinds(p), std::set<K>{K::kArena});
  p = SmallPlan();
  p.buffers[4].offset = 300;  // y overlaps x in the pool and is misaligned
  EXPECT_EQ(Kinds(p), (std::set<K>{K::kArena, K::kOverlap}));
}

TEST(PlanCheck, ProducerMustPrecedeConsumer) {
  const verifier::Manifest m = ManifestMaker("order")
                                   .Bytes("x", BufferKind::kCarry, 8).Bytes("y", BufferKind::kCarry, 8)
                                   .Call("derive.a", {"x"}, {"y"}).Call("derive.b", {}, {"x"}).Done();
  LoadPlan p;
  p.derive_order = {"derive.a", "derive.b"};  // name order, not dataflow order
  p.calls = {PlannedCall{.program = "derive.a", .index = 0, .ptr = "", .reads = {0}, .writes = {1}},
             PlannedCall{.program = "derive.b", .index = 0, .ptr = "", .reads = {}, .writes = {0}}};
  p.buffers = {Resident("x", BufferKind::kCarry, 8, 0), Resident("y", BufferKind::kCarry, 8, 256)};
  p.resident_bytes = 512;
  p.resident_bytes_rounded = p.arena_bytes_rounded = 0;
  p.granularity = 1;
  p.resident_bytes_rounded = 512;
  p.steps = {S(StepKind::kAllocResident, {}, {}, {}), S(StepKind::kAllocArena, {}, {}, {}),
             S(StepKind::kLaunch, {}, 0, {}), S(StepKind::kLaunch, {}, 1, {}), S(StepKind::kFreeArena, {}, {}, {})};
  EXPECT_EQ(Kinds(p, m), std::set<K>{K::kProducer});
  std::swap(p.derive_order[0], p.derive_order[1]);
  std::swap(p.calls[0], p.calls[1]);
  p.steps[3].waits = {2};
  EXPECT_EQ(Kinds(p, m), std::set<K>{});
}

TEST(PlanCheck, StepsMustAppearOnce) {
  LoadPlan p = SmallPlan();
  p.steps.pop_back();  // no FreeArena
  EXPECT_EQ(Kinds(p), std::set<K>{K::kSteps});
  p = SmallPlan();
  p.steps.push_back(S(StepKind::kLaunch, {}, 1, {}));
  EXPECT_EQ(Kinds(p), std::set<K>{K::kSteps});
  p = SmallPlan();
  p.steps[8] = S(StepKind::kFill, 1, {}, {7});  // b filled twice, never released
  EXPECT_TRUE(Kinds(p).contains(K::kSteps));
}

TEST(PlanCheck, LaunchMustWaitForWhatItReads) {
  LoadPlan p = SmallPlan();
  p.steps[4].waits = {2};  // not the weight's fill
  EXPECT_EQ(Kinds(p), std::set<K>{K::kLaunchWait});
  p = SmallPlan();
  p.steps[7].waits = {3, 6};
  p.steps[6].waits = {3};  // neither path reaches x's writer (4)
  EXPECT_EQ(Kinds(p), (std::set<K>{K::kLaunchWait, K::kFillWait}));
}

TEST(PlanCheck, FillMustWaitForEarlierOccupantsAndItsLane) {
  LoadPlan p = SmallPlan();
  p.steps[6].waits = {3};  // b reuses a's bytes without waiting for a's reader
  EXPECT_EQ(Kinds(p), std::set<K>{K::kFillWait});
  p = SmallPlan();
  p.steps[3].waits = {};  // lane 0 order broken
  EXPECT_EQ(Kinds(p), std::set<K>{K::kFillWait});
}

TEST(PlanCheck, ReleaseAndFreeMustWaitForLastReader) {
  LoadPlan p = SmallPlan();
  p.steps[8].waits = {};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kReleaseWait});
  p = SmallPlan();
  p.steps[9].waits = {4};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kReleaseWait});
}

}  // namespace
}  // namespace loadplan::simulator
