// Tests of the symbolic memory simulator: per-phase expressions, extrema with their points,
// values at the user's point, the naive peak, the widest moment, sizes and device presets.
#include "simulator/phases/phases.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "simulator/planner/planner.h"
#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::simulator {
namespace {

using testing::ManifestMaker;
using verifier::BufferKind;
using verifier::Expr;

constexpr uint64_t kMiB2 = 2u << 20;

// One derive call reading sources a (1000 B) and b (3000 B); serve buffers over batch in [1, 8].
verifier::Manifest Served() {
  return ManifestMaker("served")
      .Var("batch", 1, 8)
      .Bytes("a", BufferKind::kSource, 1000)
      .Bytes("b", BufferKind::kSource, 3000)
      .Bytes("w", BufferKind::kWeight, 5000)
      .Bytes("x", BufferKind::kCarry, 4000)
      .Buffer("kv", BufferKind::kState, {Expr::Var("batch"), Expr::Const(1 << 20)})
      .Buffer("tmp", BufferKind::kScratch, {Expr::Var("batch") * Expr::Const(3)}, base::Dtype::kF32)
      .Buffer("tokens", BufferKind::kInput, {Expr::Var("batch")}, base::Dtype::kI32)
      .Buffer("peer", BufferKind::kPeer, {Expr::Const(1 << 30)})
      .Call("derive.x", {"a", "b"}, {"x"})
      .Call("init", {"kv"}, {"tmp"}, /*derive=*/false, /*once=*/true)
      .Done();
}

const PhasePeak& Phase(const MemoryPhases& m, std::string_view name) {
  for (const PhasePeak& p : m.phases) {
    if (p.name == name) return p;
  }
  static const PhasePeak kNone;
  ADD_FAILURE() << "no phase " << name;
  return kNone;
}

TEST(Phases, LoadIsPoolPlusArena) {
  const verifier::Manifest m = Served();
  const LoadPlan plan = test_support::PlanOf(m);
  const MemoryPhases ph = ComputePhases(m, plan);
  const PhasePeak& load = Phase(ph, "load");
  EXPECT_EQ(load.bytes, Expr::Const(2 * kMiB2));
  ASSERT_TRUE(load.max);
  EXPECT_EQ(load.max->value, static_cast<int64_t>(2 * kMiB2));
}

TEST(Phases, ServeRangesOverTheBoxWithItsCorners) {
  const verifier::Manifest m = Served();
  const MemoryPhases ph = ComputePhases(m, test_support::PlanOf(m), {{"batch", 4}});
  const PhasePeak& serve = Phase(ph, "serve");
  // pool (2 MiB) + kv (batch MiB) + tmp (12 batch) + tokens (4 batch); peer counts nowhere.
  const auto at = [](int64_t batch) {
    return static_cast<int64_t>(kMiB2) + batch * ((1 << 20) + 16);
  };
  ASSERT_TRUE(serve.min && serve.max);
  EXPECT_EQ(serve.min->value, at(1));
  EXPECT_EQ(serve.min->at, (verifier::Assignment{{"batch", 1}}));
  EXPECT_EQ(serve.max->value, at(8));
  EXPECT_EQ(serve.max->at, (verifier::Assignment{{"batch", 8}}));
  EXPECT_TRUE(serve.max->exact);
  EXPECT_EQ(serve.at, (verifier::Range{at(4), at(4)}));
  const PhasePeak& once = Phase(ph, "once");
  EXPECT_EQ(once.max->value, static_cast<int64_t>(kMiB2) + 8 * 12);
  EXPECT_EQ(ph.peak_phase, "serve");
  EXPECT_EQ(ph.peak->value, at(8));
  EXPECT_EQ(ph.peak_at, (verifier::Range{std::max<int64_t>(at(4), 2 * kMiB2),
                                         std::max<int64_t>(at(4), 2 * kMiB2)}));
}

TEST(Phases, UnboundVariablesKeepTheirRange) {
  const verifier::Manifest m = Served();
  const MemoryPhases ph = ComputePhases(m, test_support::PlanOf(m));
  const PhasePeak& serve = Phase(ph, "serve");
  ASSERT_TRUE(serve.at);
  EXPECT_EQ(serve.at->min, serve.min->value);
  EXPECT_EQ(serve.at->max, serve.max->value);
}

TEST(Phases, NaivePeakHoldsEverySourceResident) {
  const verifier::Manifest m = Served();
  const LoadPlan plan = test_support::PlanOf(m, PlanOptions{.granularity = 1});
  // pool: w 5120 + x 4096; sources 1024 + 3072 aligned.
  EXPECT_EQ(ComputePhases(m, plan).naive_peak, 5120u + 4096u + 1024u + 3072u);
}

TEST(Phases, KindTotals) {
  const verifier::Manifest m = Served();
  const MemoryPhases ph = ComputePhases(m, test_support::PlanOf(m));
  ASSERT_EQ(ph.kinds.size(), 7u);
  EXPECT_EQ(ph.kinds[0].kind, "weight");
  EXPECT_EQ(ph.kinds[0].range, (verifier::Range{5120, 5120}));
  EXPECT_EQ(ph.kinds[3].kind, "state");
  EXPECT_EQ(ph.kinds[3].range, (verifier::Range{1 << 20, 8 << 20}));
}

TEST(Phases, WidestMomentNamesTheLiveSources) {
  const verifier::Manifest m = ManifestMaker("w", 1, 1)
                                   .Bytes("a", BufferKind::kSource, 100)
                                   .Bytes("b", BufferKind::kSource, 900)
                                   .Bytes("c", BufferKind::kSource, 300)
                                   .Bytes("x", BufferKind::kCarry, 1)
                                   .Bytes("y", BufferKind::kCarry, 1)
                                   .Bytes("z", BufferKind::kCarry, 1)
                                   .Call("derive.p", {"a"}, {"x"})
                                   .Call("derive.p", {"b"}, {"y"})
                                   .Call("derive.p", {"c"}, {"z"})
                                   .Done();
  const LoadPlan plan = test_support::PlanOf(m);  // prefetch 1: a [0,1), b [0,2), c [1,3)
  const std::optional<WidestMoment> w = FindWidestMoment(plan);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->time, ClockTime{1});
  EXPECT_EQ(w->bytes, 1024u + 512u);
  EXPECT_EQ(w->bytes, plan.lower_bound);
  EXPECT_EQ(w->live, (std::vector<BufferId>{BufferId{1}, BufferId{2}}));  // b, c
}

TEST(Sizes, ParseByteSize) {
  EXPECT_EQ(ParseByteSize("1073741824"), 1073741824u);
  EXPECT_EQ(ParseByteSize("141GiB"), 141ull << 30);
  EXPECT_EQ(ParseByteSize("139.8 GiB"), 150109106995u);
  EXPECT_EQ(ParseByteSize("288GB"), 288000000000u);
  EXPECT_EQ(ParseByteSize("2KiB"), 2048u);
  EXPECT_EQ(ParseByteSize("2kb"), 2000u);
  EXPECT_EQ(ParseByteSize("1.5TiB"), 3ull << 39);
  EXPECT_EQ(ParseByteSize("0"), 0u);
  EXPECT_EQ(ParseByteSize(""), std::nullopt);
  EXPECT_EQ(ParseByteSize("GiB"), std::nullopt);
  EXPECT_EQ(ParseByteSize("12 parsecs"), std::nullopt);
  EXPECT_EQ(ParseByteSize("-1"), std::nullopt);
  EXPECT_EQ(ParseByteSize("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseByteSize("17000000TiB"), std::nullopt);
}

TEST(Sizes, DevicePresets) {
  EXPECT_EQ(ParseDeviceMemory("h200"), 150109106995u);
  EXPECT_EQ(ParseDeviceMemory("H100"), 85017493504u);
  EXPECT_EQ(PresetNames(), "h100, h200, b200, gb300");
  EXPECT_EQ(ParseDeviceMemory("GB300"), 288000000000u);
  EXPECT_EQ(ParseDeviceMemory("80GiB"), 80ull << 30);
  EXPECT_EQ(ParseDeviceMemory("h900"), std::nullopt);
  for (const DevicePreset& p : DevicePresets()) EXPECT_FALSE(p.source.empty()) << p.name;
  EXPECT_EQ(FormatGiB(3ull << 29), "1.50 GiB");
}

// The matched preset comes back once, with the label the report prints.
TEST(Sizes, ResolveDeviceMemory) {
  const std::optional<DeviceMemory> h200 = ResolveDeviceMemory("H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->bytes, 150109106995u);
  ASSERT_NE(h200->preset, nullptr);
  EXPECT_EQ(h200->preset->name, "h200");
  EXPECT_EQ(h200->label, "h200 (measured)");
  const std::optional<DeviceMemory> gb300 = ResolveDeviceMemory("gb300");
  ASSERT_TRUE(gb300.has_value());
  EXPECT_EQ(gb300->label, "gb300 (nominal)");
  const std::optional<DeviceMemory> size = ResolveDeviceMemory("139.8GiB");
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->preset, nullptr);
  EXPECT_EQ(size->label, "139.8GiB");
  EXPECT_EQ(size->bytes, 150109106995u);
  EXPECT_FALSE(ResolveDeviceMemory("h900").has_value());
  EXPECT_FALSE(ResolveDeviceMemory("").has_value());
}

// 10^5 state buffers (the serve phase sums them all): plans without a 10^5-deep sum, and the
// totals are the sums. Before, the sum was one chain copied per addition (quadratic) and the
// recursive passes over it overflowed the stack from ~64,000 buffers.
TEST(Phases, ManyServingBuffersSumFlat) {
  constexpr int kBuffers = 100000;
  ManifestMaker mk("many-state");
  mk.Var("batch", 1, 8).Bytes("a", BufferKind::kSource, 1000).Bytes("x", BufferKind::kCarry, 1000);
  int64_t per_batch = 0;
  for (int i = 0; i < kBuffers; ++i) {
    mk.Buffer(fmt::format("kv{:06}", i), BufferKind::kState,
              {Expr::Var("batch"), Expr::Const(i % 7 + 1)});
    per_batch += i % 7 + 1;
  }
  const verifier::Manifest m = mk.Call("derive.x", {"a"}, {"x"}).Done();
  const LoadPlan plan = test_support::PlanOf(m);
  const MemoryPhases ph = ComputePhases(m, plan, {{"batch", 2}});
  const int64_t resident = static_cast<int64_t>(plan.resident_bytes_rounded);
  const PhasePeak& serve = Phase(ph, "serve");
  ASSERT_TRUE(serve.max && serve.min && serve.at);
  EXPECT_EQ(serve.max->value, resident + 8 * per_batch);
  EXPECT_EQ(serve.min->value, resident + per_batch);
  EXPECT_EQ(serve.at, (verifier::Range{resident + 2 * per_batch, resident + 2 * per_batch}));
  EXPECT_EQ(verifier::ToString(serve.bytes), fmt::format("{} * batch + {}", per_batch, resident));
  ASSERT_EQ(ph.kinds[3].kind, "state");
  EXPECT_EQ(ph.kinds[3].range, (verifier::Range{per_batch, 8 * per_batch}));
}

RC_GTEST_PROP(PhasesProps, ValueAtAPointLiesInTheRangeAndSumsTheBuffers, ()) {
  const verifier::Manifest m = testing::RandomManifest();
  const LoadPlan plan = test_support::PlanOf(m);
  const verifier::Range batch = m.VarBox().at("batch");
  const int64_t b = *rc::gen::inRange<int64_t>(batch.min, batch.max + 1);
  const MemoryPhases ph = ComputePhases(m, plan, {{"batch", b}});
  int64_t serve = static_cast<int64_t>(plan.resident_bytes_rounded);
  for (const verifier::Buffer* buf : ServeBuffers(m)) {
    serve += *verifier::ValueAt(verifier::ByteSize(*buf), {{"batch", b}});
  }
  const PhasePeak& s = Phase(ph, "serve");
  RC_ASSERT(s.at == (verifier::Range{serve, serve}));
  for (const PhasePeak& p : ph.phases) {
    RC_ASSERT(p.min && p.max && p.at);
    RC_ASSERT(p.min->value <= p.at->min && p.at->max <= p.max->value);
  }
  RC_ASSERT(ph.peak->value >= ph.peak_at->max);
  RC_ASSERT(ph.naive_peak >= plan.resident_bytes);
}

}  // namespace
}  // namespace loadplan::simulator
