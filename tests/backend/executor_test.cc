// Tests of the executor over a RecordingBackend (its log is the plan's steps) and of the
// MemoryBackend: peaks, simulated OOM with cleanup, and the replayed peak against the
// symbolic phases at random points of the variable box.
#include "backend/executor.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "backend/memory/memory_backend.h"
#include "simulator/phases/phases.h"
#include "simulator/planner/planner.h"
#include "tests/backend/recording_backend.h"
#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::backend {
namespace {

using simulator::LoadPlan;
using simulator::StepKind;
using simulator::testing::ManifestMaker;
using testing::CallKind;
using testing::RecordedCall;
using verifier::BufferKind;

LoadPlan PlanOf(const verifier::Manifest& m, const simulator::PlanOptions& o = {}) {
  return test_support::PlanOf(m, o);
}

verifier::Manifest Chain() {
  return ManifestMaker("chain", 2, 0)
      .Var("batch", 1, 4)
      .Bytes("a", BufferKind::kSource, 1000)
      .Bytes("b", BufferKind::kSource, 3000)
      .Bytes("w", BufferKind::kWeight, 100)
      .Bytes("u", BufferKind::kWeight, 50)
      .Bytes("x", BufferKind::kCarry, 700)
      .Bytes("y", BufferKind::kCarry, 300)
      .Buffer("kv", BufferKind::kState,
              {verifier::Expr::Var("batch"), verifier::Expr::Const(1 << 20)})
      .Call("derive.q", {"x", "b"}, {"y"})
      .Call("derive.p", {"a", "w"}, {"x"})
      .Done();
}

// What the log should be: one call per step, in step order, then Finish.
std::vector<RecordedCall> Expected(const LoadPlan& p) {
  std::vector<RecordedCall> out;
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    const simulator::Step& s = p.steps[i];
    RecordedCall c{.step = i};
    for (simulator::StepIndex w : s.waits) c.waits.push_back(simulator::Index(w));
    switch (s.kind) {
      case StepKind::kAllocResident:
        c.kind = CallKind::kAllocateResident;
        c.bytes = p.resident_bytes_rounded;
        break;
      case StepKind::kAllocArena:
        c.kind = CallKind::kAllocateArena;
        c.bytes = p.arena_bytes_rounded;
        break;
      case StepKind::kFill:
        c.kind = CallKind::kFill;
        c.buffer = p.buffer(*s.buffer).name;
        c.lane = simulator::Index(*s.lane);
        break;
      case StepKind::kLaunch:
        c.kind = CallKind::kLaunch;
        c.call = simulator::Index(*s.call);
        break;
      case StepKind::kRelease:
        c.kind = CallKind::kRelease;
        c.buffer = p.buffer(*s.buffer).name;
        break;
      case StepKind::kFreeArena: c.kind = CallKind::kFreeArena; break;
    }
    out.push_back(std::move(c));
  }
  out.push_back({.kind = CallKind::kFinish});
  return out;
}

TEST(Executor, LogIsThePlansSteps) {
  const LoadPlan p = PlanOf(Chain());
  testing::RecordingBackend rec;
  const ExecuteResult r = Execute(p, rec);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.steps_done, p.steps.size());
  EXPECT_EQ(rec.log(), Expected(p));
  EXPECT_EQ(rec.PeakBytes(), p.resident_bytes_rounded + p.arena_bytes_rounded);
}

TEST(Executor, StopsAtFirstErrorAndCleansUp) {
  const LoadPlan p = PlanOf(Chain());
  size_t launch = 0;
  while (p.steps[launch].kind != StepKind::kLaunch) ++launch;
  testing::RecordingBackend rec(launch);
  const ExecuteResult r = Execute(p, rec);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.failed_step, simulator::StepIndex{static_cast<uint32_t>(launch)});
  EXPECT_EQ(r.steps_done, launch);
  EXPECT_NE(r.status.message().find(fmt::format("step {} (launch derive.p call 0)", launch)),
            std::string::npos)
      << r.status.message();
  ASSERT_EQ(rec.log().size(), launch + 3);  // the failed call, then the cleanup
  EXPECT_EQ(rec.log()[launch + 1].kind, CallKind::kFreeArena);
  EXPECT_EQ(rec.log()[launch + 2].kind, CallKind::kFreeResident);
  EXPECT_TRUE(r.cleanup.ok());
}

TEST(Executor, FailedArenaFreesOnlyThePool) {
  const LoadPlan p = PlanOf(Chain());
  testing::RecordingBackend rec(1);  // AllocateArena fails
  const ExecuteResult r = Execute(p, rec);
  EXPECT_EQ(r.failed_step, simulator::StepIndex{1});
  ASSERT_EQ(rec.log().size(), 3u);
  EXPECT_EQ(rec.log()[2].kind, CallKind::kFreeResident);
}

TEST(Executor, FailedFinishIsAFailedLoadAndCleansUp) {
  const LoadPlan p = PlanOf(Chain());
  testing::RecordingBackend rec(p.steps.size());  // every step succeeds, Finish fails
  const ExecuteResult r = Execute(p, rec);
  EXPECT_FALSE(r.status.ok());
  EXPECT_EQ(r.failed_step, std::nullopt);
  EXPECT_EQ(r.steps_done, p.steps.size());
  EXPECT_NE(r.status.message().find("finishing the load"), std::string::npos) << r.status.message();
  ASSERT_EQ(rec.log().size(), p.steps.size() + 2);
  EXPECT_EQ(rec.log().back().kind, CallKind::kFreeResident);  // the arena was freed by the plan
}

TEST(Executor, BadIndexIsAnErrorNotACrash) {
  LoadPlan p = PlanOf(Chain());
  p.steps[2].buffer = simulator::BufferId{1000};
  testing::RecordingBackend rec;
  const ExecuteResult r = Execute(p, rec);
  EXPECT_EQ(r.failed_step, simulator::StepIndex{2});
  EXPECT_EQ(rec.log().size(), 4u);  // two allocations, then their cleanup
  p = PlanOf(Chain());
  p.steps[3].waits = {simulator::StepIndex{3}};
  EXPECT_EQ(Execute(p, rec).failed_step, simulator::StepIndex{3});
  size_t launch = 0;
  p = PlanOf(Chain());
  while (p.steps[launch].kind != StepKind::kLaunch) ++launch;
  p.calls[simulator::Index(*p.steps[launch].call)].args[0].buffer = simulator::BufferId{1000};
  EXPECT_EQ(Execute(p, rec).failed_step, simulator::StepIndex{static_cast<uint32_t>(launch)});
}

TEST(MemoryBackend, PeakIsPoolPlusArena) {
  const LoadPlan p = PlanOf(Chain());
  MemoryBackend mb;
  ASSERT_TRUE(Execute(p, mb).status.ok());
  EXPECT_EQ(mb.PeakBytes(), p.resident_bytes_rounded + p.arena_bytes_rounded);
  EXPECT_EQ(mb.LiveBytes(), p.resident_bytes_rounded);  // the arena went back
  EXPECT_EQ(mb.StagedPeak(), 3000u);  // a's window [0, 1) ends before b's [1, 2) begins
  EXPECT_EQ(mb.Launches(), 2u);
}

TEST(MemoryBackend, SimulatedOomSaysWhatAndHowMuch) {
  const LoadPlan p = PlanOf(Chain());
  MemoryBackend mb(p.resident_bytes_rounded + 1000);
  const ExecuteResult r = Execute(p, mb);
  EXPECT_EQ(r.failed_step, simulator::StepIndex{1});
  EXPECT_EQ(r.status.kind(), base::ErrorKind::kOutOfMemory);
  const std::string& msg = r.status.message();
  EXPECT_NE(msg.find(fmt::format("({} bytes)", p.arena_bytes_rounded)), std::string::npos) << msg;
  EXPECT_NE(msg.find("free of"), std::string::npos) << msg;
  // The figures as data, through the executor's re-wording ("step 1 (...): ...").
  ASSERT_TRUE(r.status.bytes().has_value());
  EXPECT_EQ(r.status.bytes()->requested, p.arena_bytes_rounded);
  EXPECT_EQ(r.status.bytes()->free, 1000u);
  EXPECT_EQ(mb.LiveBytes(), 0u);  // cleanup freed the pool
}

TEST(MemoryBackend, ServeAllocationsAtAPoint) {
  const verifier::Manifest m = Chain();
  const LoadPlan p = PlanOf(m);
  const SimulatedPeaks s = SimulateMemory(m, p, {{"batch", 3}});
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.serve, p.resident_bytes_rounded + (3u << 20));
  EXPECT_EQ(s.peak, std::max(s.load, s.serve));
  EXPECT_FALSE(SimulateMemory(m, p, {}).status.ok());  // batch unbound
}

RC_GTEST_PROP(ExecutorProps, RecordedLogMatchesSteps, ()) {
  const verifier::Manifest m = simulator::testing::RandomManifest();
  const LoadPlan p = PlanOf(m);
  testing::RecordingBackend rec;
  RC_ASSERT(Execute(p, rec).status.ok());
  RC_ASSERT(rec.log() == Expected(p));
}

// The replayed peak equals the symbolic phases evaluated at the same point, never exceeds
// their maximum over the box, and the replayed live set of sources never exceeds the
// lower bound (exact sizes vs aligned sizes).
RC_GTEST_PROP(ExecutorProps, ReplayedPeakMatchesSymbolicPhases, ()) {
  const verifier::Manifest m = simulator::testing::RandomManifest();
  const LoadPlan p =
      PlanOf(m, simulator::PlanOptions{.granularity = *rc::gen::element<uint64_t>(1, 4096)});
  const verifier::Range batch = m.VarBox().at("batch");
  const verifier::Assignment at{{"batch", *rc::gen::inRange<int64_t>(batch.min, batch.max + 1)}};
  const SimulatedPeaks s = SimulateMemory(m, p, at);
  RC_ASSERT(s.status.ok());
  const simulator::MemoryPhases ph = simulator::ComputePhases(m, p, at);
  RC_ASSERT(ph.peak_at && ph.peak);
  RC_ASSERT(static_cast<int64_t>(s.peak) == ph.peak_at->max);
  RC_ASSERT(static_cast<int64_t>(s.peak) <= ph.peak->value);
  RC_ASSERT(static_cast<int64_t>(s.load) == ph.phases[0].at->max);
  RC_ASSERT(static_cast<int64_t>(s.once) == ph.phases[1].at->max);
  RC_ASSERT(static_cast<int64_t>(s.serve) == ph.phases[2].at->max);
  RC_ASSERT(s.staged_peak <= p.lower_bound);
  uint64_t widest = 0;
  for (uint32_t t = 0; t < p.calls.size(); ++t) {
    uint64_t live = 0;
    for (simulator::BufferId i : p.arrival) {
      const simulator::PlannedBuffer& b = p.buffer(i);
      if (simulator::Index(b.window_begin) <= t && t < simulator::Index(b.window_end))
        live += b.bytes;
    }
    widest = std::max(widest, live);
  }
  RC_ASSERT(s.staged_peak == widest);
}

}  // namespace
}  // namespace loadplan::backend
