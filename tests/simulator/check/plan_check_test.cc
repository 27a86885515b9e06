// Tests of the plan checker on hand-built plans (this test never links the planner):
// a valid plan passes, and each broken variant reports its violation kind.
#include "simulator/check/plan_check.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "tests/simulator/plan_fixtures.h"

namespace loadplan::simulator {
namespace {

using testing::ManifestMaker;
using verifier::BufferKind;

// Buffers (name order): a=0, b=1 sources; w=2 weight; x=3, y=4 carries.
verifier::Manifest Small() {
  return ManifestMaker("small")
      .Bytes("a", BufferKind::kSource, 1000)
      .Bytes("b", BufferKind::kSource, 600)
      .Bytes("w", BufferKind::kWeight, 100)
      .Bytes("x", BufferKind::kCarry, 200)
      .Bytes("y", BufferKind::kCarry, 300)
      .Call("derive.p", {"a", "w"}, {"x"})
      .Call("derive.p", {"b", "x"}, {"y"})
      .Done();
}

PlannedBuffer Source(uint32_t id, std::string name, uint64_t bytes, uint32_t t) {
  return PlannedBuffer{.id = BufferId{id},
                       .name = name,
                       .kind = BufferKind::kSource,
                       .residence = Residence::kStaged,
                       .shape = std::vector<uint64_t>{bytes},
                       .bytes = bytes,
                       .offset = 0,
                       .tensor = "model." + name,
                       .lane = Lane{0},
                       .first_reader = CallId{t},
                       .last_reader = CallId{t},
                       .window_begin = ClockTime{t},
                       .window_end = ClockTime{t + 1}};
}
PlannedBuffer Resident(uint32_t id, std::string name, BufferKind kind, uint64_t bytes,
                       uint64_t offset) {
  PlannedBuffer b{.id = BufferId{id},
                  .name = name,
                  .kind = kind,
                  .residence = Residence::kResident,
                  .shape = std::vector<uint64_t>{bytes},
                  .bytes = bytes,
                  .offset = offset};
  if (kind == BufferKind::kWeight) b.tensor = "model." + name;
  return b;
}
Step S(StepKind k, std::optional<uint32_t> buffer, std::optional<uint32_t> call,
       const std::vector<uint32_t>& waits) {
  Step s{.kind = k, .lane = k == StepKind::kFill ? std::optional<Lane>(Lane{0}) : std::nullopt};
  if (buffer) s.buffer = BufferId{*buffer};
  if (call) s.call = CallId{*call};
  for (uint32_t w : waits) s.waits.push_back(StepIndex{w});
  return s;
}
std::vector<StepIndex> W(std::initializer_list<uint32_t> waits) {
  std::vector<StepIndex> out;
  for (uint32_t w : waits) out.push_back(StepIndex{w});
  return out;
}
std::vector<BufferId> B(std::initializer_list<uint32_t> ids) {
  std::vector<BufferId> out;
  for (uint32_t i : ids) out.push_back(BufferId{i});
  return out;
}
// A call of ManifestMaker's kernel k_r<R>_w<W>: buffer params r00.. then w00.., each touching
// its whole buffer, with the element counts as scalars r00_n.. (all buffers are U8 here).
PlannedCall Call(uint32_t id, std::string program, uint32_t index,
                 std::vector<std::pair<uint32_t, uint64_t>> reads,
                 std::vector<std::pair<uint32_t, uint64_t>> writes) {
  PlannedCall c{.id = CallId{id},
                .program = program,
                .call_in_program = index,
                .ptr = fmt::format("/programs/{}/calls/{}", program, index),
                .kernel = fmt::format("k_r{}_w{}", reads.size(), writes.size())};
  auto add = [&](std::string param, std::pair<uint32_t, uint64_t> buffer, verifier::Access access) {
    c.args.push_back({.param = param,
                      .buffer = BufferId{buffer.first},
                      .access = access,
                      .bytes = buffer.second});
    c.scalars.push_back({.param = param + "_n", .value = static_cast<int64_t>(buffer.second)});
    (access == verifier::Access::kRead ? c.reads : c.writes).push_back(BufferId{buffer.first});
  };
  for (size_t i = 0; i < reads.size(); ++i)
    add(fmt::format("r{:02}", i), reads[i], verifier::Access::kRead);
  for (size_t i = 0; i < writes.size(); ++i)
    add(fmt::format("w{:02}", i), writes[i], verifier::Access::kWrite);
  std::sort(c.reads.begin(), c.reads.end());
  return c;
}

LoadPlan SmallPlan() {
  LoadPlan p;
  p.manifest_name = "small";
  p.granularity = 4096;
  p.derive_order = {"derive.p"};
  p.calls = {Call(0, "derive.p", 0, {{0, 1000}, {2, 100}}, {{3, 200}}),
             Call(1, "derive.p", 1, {{1, 600}, {3, 200}}, {{4, 300}})};
  p.buffers = {Source(0, "a", 1000, 0), Source(1, "b", 600, 1),
               Resident(2, "w", BufferKind::kWeight, 100, 0),
               Resident(3, "x", BufferKind::kCarry, 200, 256),
               Resident(4, "y", BufferKind::kCarry, 300, 512)};
  p.buffers[2].lane = Lane{0};
  p.arrival = B({0, 1});
  p.resident_bytes = 1024;
  p.resident_bytes_rounded = 4096;
  p.arena_bytes = 1024;
  p.arena_bytes_rounded = 4096;
  p.lower_bound = 1024;
  p.steps = {S(StepKind::kAllocResident, {}, {}, {}),   // 0
             S(StepKind::kAllocArena, {}, {}, {}),      // 1
             S(StepKind::kFill, 0, {}, {}),             // 2 a
             S(StepKind::kFill, 2, {}, {2}),            // 3 w
             S(StepKind::kLaunch, {}, 0, {2, 3}),       // 4
             S(StepKind::kRelease, 0, {}, {4}),         // 5
             S(StepKind::kFill, 1, {}, {3, 4}),         // 6 b: lane order, a's last reader
             S(StepKind::kLaunch, {}, 1, {4, 6}),       // 7
             S(StepKind::kRelease, 1, {}, {7}),         // 8
             S(StepKind::kFreeArena, {}, {}, {4, 7})};  // 9
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
  for (const PlanViolation& x : v)
    ADD_FAILURE() << PlanViolationKindName(x.kind) << ": " << x.message;
}

TEST(PlanCheck, TransitiveWaitsAreEnough) {
  LoadPlan p = SmallPlan();
  p.steps[7].waits = W({6});  // 6 waits for 4, the writer of x
  EXPECT_EQ(Kinds(p), std::set<K>{});
}

TEST(PlanCheck, BadIndices) {
  LoadPlan p = SmallPlan();
  p.steps[2].waits = W({5});
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
  p = SmallPlan();
  p.steps[6].buffer = BufferId{99};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
  p = SmallPlan();
  p.steps[6].lane = Lane{1};  // the plan has one lane
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
}

// A buffer bound by a `tensors` list: the plan carries the same list, in the same order.
TEST(PlanCheck, TensorListsMustMatchTheManifest) {
  verifier::Manifest m = Small();
  verifier::Buffer& w = m.buffers[2];
  ASSERT_EQ(w.name, "w");
  w.tensor.reset();
  w.tensors = std::vector<std::string>{"model.w.0", "model.w.1"};
  LoadPlan p = SmallPlan();
  p.buffers[2].tensor.reset();
  p.buffers[2].tensors = w.tensors;
  EXPECT_EQ(Kinds(p, m), std::set<K>{});
  LoadPlan reordered = p;
  reordered.buffers[2].tensors = std::vector<std::string>{"model.w.1", "model.w.0"};
  EXPECT_EQ(Kinds(reordered, m), std::set<K>{K::kBuffers});
  LoadPlan shorter = p;
  shorter.buffers[2].tensors->pop_back();
  EXPECT_EQ(Kinds(shorter, m), std::set<K>{K::kBuffers});
  LoadPlan single = p;  // the list's first tensor as a `tensor`
  single.buffers[2].tensors.reset();
  single.buffers[2].tensor = "model.w.0";
  EXPECT_EQ(Kinds(single, m), std::set<K>{K::kBuffers});
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});  // a list where the manifest has a tensor
}

// A sliced buffer (issue 30): the plan carries the manifest's slice, and the slice's runs
// cover the buffer's bytes in FillRuns' count.
TEST(PlanCheck, SlicesMustMatchTheManifestAndCoverTheBuffer) {
  verifier::Manifest m = Small();
  verifier::Buffer& w = m.buffers[2];
  ASSERT_EQ(w.name, "w");
  w.shape = {verifier::Expr::Const(10), verifier::Expr::Const(10)};
  w.slice = verifier::TensorSlice{.dim = 1, .start = 10, .length = 10};  // 10 runs of 10 bytes
  LoadPlan p = SmallPlan();
  p.buffers[2].shape = std::vector<uint64_t>{10, 10};
  p.buffers[2].slice = w.slice;
  EXPECT_EQ(Kinds(p, m), std::set<K>{});
  LoadPlan other = p;  // another slice than the manifest's
  other.buffers[2].slice->start = 0;
  EXPECT_EQ(Kinds(other, m), std::set<K>{K::kBuffers});
  LoadPlan unsliced = p;
  unsliced.buffers[2].slice.reset();
  EXPECT_EQ(Kinds(unsliced, m), std::set<K>{K::kBuffers});
  verifier::Manifest short_slice = m;  // a shape that does not hold the slice
  short_slice.buffers[2].slice->length = 5;
  LoadPlan short_plan = p;
  short_plan.buffers[2].slice = short_slice.buffers[2].slice;
  EXPECT_EQ(Kinds(short_plan, short_slice), std::set<K>{K::kBuffers});
}

TEST(PlanCheck, BuffersAndCallsMustMatchTheManifest) {
  LoadPlan p = SmallPlan();
  p.buffers[0].bytes = 10;
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});
  p = SmallPlan();
  p.calls[0].reads = B({0});  // forgets the weight
  EXPECT_EQ(Kinds(p), std::set<K>{K::kCalls});
}

TEST(PlanCheck, CallArgumentsMustMatchTheManifest) {
  LoadPlan p = SmallPlan();
  p.calls[0].scalars[0].value = 999;  // a scalar the manifest call does not pass
  EXPECT_EQ(Kinds(p), std::set<K>{K::kArgs});
  p = SmallPlan();
  p.calls[1].args[2].bytes = 301;  // y's extent in bytes changed
  EXPECT_EQ(Kinds(p), std::set<K>{K::kArgs});
  p = SmallPlan();
  p.calls[1].kernel = "copy";
  EXPECT_EQ(Kinds(p), std::set<K>{K::kArgs});
  p = SmallPlan();
  p.calls[0].id = CallId{1};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
}

TEST(PlanCheck, BufferBindingsMustMatchTheManifest) {
  LoadPlan p = SmallPlan();
  p.buffers[2].tensor = "model.other";
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});
  p = SmallPlan();
  p.buffers[2].dtype = base::Dtype::kBF16;
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});
  p = SmallPlan();
  p.buffers[2].shape = std::vector<uint64_t>{50, 2};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kBuffers});
  p = SmallPlan();
  p.buffers[2].id = BufferId{0};
  EXPECT_EQ(Kinds(p), std::set<K>{K::kIndex});
}

TEST(PlanCheck, LiveSourcesMustNotShareBytes) {
  LoadPlan p = SmallPlan();
  p.buffers[1].window_begin = ClockTime{0};  // b prefetched while a lives at the same offset
  EXPECT_TRUE(Kinds(p).contains(K::kOverlap));
  p.buffers[1].offset = 1024;
  p.arena_bytes = 2048;
  p.lower_bound = 2048;
  EXPECT_FALSE(Kinds(p).contains(K::kOverlap));
}

TEST(PlanCheck, WindowsMustCoverReaders) {
  LoadPlan p = SmallPlan();
  p.buffers[1].window_end = ClockTime{1};
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
                                   .Bytes("x", BufferKind::kCarry, 8)
                                   .Bytes("y", BufferKind::kCarry, 8)
                                   .Call("derive.a", {"x"}, {"y"})
                                   .Call("derive.b", {}, {"x"})
                                   .Done();
  LoadPlan p;
  p.derive_order = {"derive.a", "derive.b"};  // name order, not dataflow order
  p.calls = {Call(0, "derive.a", 0, {{0, 8}}, {{1, 8}}), Call(1, "derive.b", 0, {}, {{0, 8}})};
  p.buffers = {Resident(0, "x", BufferKind::kCarry, 8, 0),
               Resident(1, "y", BufferKind::kCarry, 8, 256)};
  p.resident_bytes = 512;
  p.resident_bytes_rounded = p.arena_bytes_rounded = 0;
  p.granularity = 1;
  p.resident_bytes_rounded = 512;
  p.steps = {S(StepKind::kAllocResident, {}, {}, {}), S(StepKind::kAllocArena, {}, {}, {}),
             S(StepKind::kLaunch, {}, 0, {}), S(StepKind::kLaunch, {}, 1, {}),
             S(StepKind::kFreeArena, {}, {}, {})};
  EXPECT_EQ(Kinds(p, m), std::set<K>{K::kProducer});
  std::swap(p.derive_order[0], p.derive_order[1]);
  std::swap(p.calls[0], p.calls[1]);
  std::swap(p.calls[0].id, p.calls[1].id);
  p.steps[3].waits = W({2});
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
  p.steps[4].waits = W({2});  // not the weight's fill
  EXPECT_EQ(Kinds(p), std::set<K>{K::kLaunchWait});
  p = SmallPlan();
  p.steps[7].waits = W({3, 6});
  p.steps[6].waits = W({3});  // neither path reaches x's writer (4)
  EXPECT_EQ(Kinds(p), (std::set<K>{K::kLaunchWait, K::kFillWait}));
}

TEST(PlanCheck, FillMustWaitForEarlierOccupantsAndItsLane) {
  LoadPlan p = SmallPlan();
  p.steps[6].waits = W({3});  // b reuses a's bytes without waiting for a's reader
  EXPECT_EQ(Kinds(p), std::set<K>{K::kFillWait});
  p = SmallPlan();
  p.steps[3].waits = W({});  // lane 0 order broken
  EXPECT_EQ(Kinds(p), std::set<K>{K::kFillWait});
}

TEST(PlanCheck, ReleaseAndFreeMustWaitForLastReader) {
  LoadPlan p = SmallPlan();
  p.steps[8].waits = W({});
  EXPECT_EQ(Kinds(p), std::set<K>{K::kReleaseWait});
  p = SmallPlan();
  p.steps[9].waits = W({4});
  EXPECT_EQ(Kinds(p), std::set<K>{K::kReleaseWait});
}

}  // namespace
}  // namespace loadplan::simulator
