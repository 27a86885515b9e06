// The load-time model on hand-built plans whose times follow by hand, and on planned manifests.
#include "simulator/timing/predict.h"
#include "simulator/timing/slice_read.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "tests/simulator/plan_fixtures.h"
#include "tests/verified_plan.h"

namespace loadplan::simulator::timing {
namespace {

// Round numbers: 2 threads x 1000-byte chunks; read 4e6 B/s hot, 1e5 cold; the pipeline 1e6
// hot, 5e4 cold; pinned H2D 2e6; kernel "k" 1000 B/s; nothing fixed.
MachineProfile Round() {
  MachineProfile p{.io_threads = 2,
                   .chunk_bytes = 1000,
                   .pinned_h2d = 2e6,
                   .page_cache_read = 4e6,
                   .direct_read = 1e5,
                   .pipeline_hot = 1e6,
                   .pipeline_cold = 5e4,
                   .default_kernel_rate = 1e9};
  p.kernels["k"] = 1000;
  return p;
}

// Buffers: s0, s1 (staged, 2000 B), x (carry, 1000 B), w (weight, 1000 B). Calls c0, c1 of
// kernel "k", each reading s<i> and writing x: 3000 bytes, 3 s at 1000 B/s.
LoadPlan Base() {
  LoadPlan p;
  auto buffer = [&](const char* name, Residence r, uint64_t bytes) {
    p.buffers.push_back({.id = BufferId{static_cast<uint32_t>(p.buffers.size())},
                         .name = name,
                         .residence = r,
                         .bytes = bytes});
  };
  buffer("s0", Residence::kStaged, 2000);
  buffer("s1", Residence::kStaged, 2000);
  buffer("x", Residence::kResident, 1000);
  buffer("w", Residence::kResident, 1000);
  for (uint32_t i = 0; i < 2; ++i) {
    p.calls.push_back({.id = CallId{i},
                       .kernel = "k",
                       .args = {{.param = "src", .buffer = BufferId{i}, .bytes = 2000},
                                {.param = "dst",
                                 .buffer = BufferId{2},
                                 .access = verifier::Access::kWrite,
                                 .bytes = 1000}}});
  }
  p.steps = {{.kind = StepKind::kAllocResident}, {.kind = StepKind::kAllocArena}};
  return p;
}
StepIndex Add(LoadPlan& p, Step s) {
  p.steps.push_back(std::move(s));
  return StepIndex{static_cast<uint32_t>(p.steps.size() - 1)};
}
StepIndex Fill(LoadPlan& p, uint32_t b, std::vector<StepIndex> waits = {}) {
  return Add(p, {.kind = StepKind::kFill, .buffer = BufferId{b}, .waits = std::move(waits)});
}
StepIndex Launch(LoadPlan& p, uint32_t c, std::vector<StepIndex> waits) {
  return Add(p, {.kind = StepKind::kLaunch, .call = CallId{c}, .waits = std::move(waits)});
}

TEST(Predict, OneFillThenOneLaunch) {
  LoadPlan p = Base();
  const StepIndex f = Fill(p, 0);
  Add(p, {.kind = StepKind::kFreeArena, .waits = {Launch(p, 0, {f})}});
  const LoadTimePrediction hot = PredictLoad(p, Round());
  // Ramp: one 1000-byte chunk per thread at 4e6 B/s = 0.0005 s; the fill 2000 / 1e6 = 0.002 s;
  // the launch 3000 / 1000 = 3 s after it.
  EXPECT_DOUBLE_EQ(hot.wall_s, 0.0005 + 0.002 + 3.0);
  EXPECT_DOUBLE_EQ(hot.derive_s, 3.0);
  EXPECT_DOUBLE_EQ(hot.tail_s, 3.0);
  EXPECT_EQ(hot.stalls, 0u);
  EXPECT_EQ(hot.fill_bytes, 2000u);
  EXPECT_EQ(hot.chunks, 2u);
  EXPECT_DOUBLE_EQ(hot.read_s, 2000 / 4e6);
  EXPECT_DOUBLE_EQ(hot.copy_s, 2000 / 2e6);
  const LoadTimePrediction cold = PredictLoad(p, Round(), {.cache = Cache::kCold});
  EXPECT_DOUBLE_EQ(cold.wall_s, 1000.0 * 2 / 1e5 + 2000 / 5e4 + 3.0);
  const LoadTimePrediction no_derive = PredictLoad(p, Round(), {.derive = false});
  EXPECT_DOUBLE_EQ(no_derive.wall_s, 0.0005 + 0.002);
}

TEST(Predict, AFillThatWaitsForALaunchStallsTheStreamAndReadsAhead) {
  LoadPlan p = Base();
  const StepIndex f0 = Fill(p, 0);
  const StepIndex l0 = Launch(p, 0, {f0});
  const StepIndex f1 = Fill(p, 1, {l0});  // s1 reuses s0's bytes
  Add(p, {.kind = StepKind::kFreeArena, .waits = {Launch(p, 1, {f1})}});
  const LoadTimePrediction t = PredictLoad(p, Round());
  EXPECT_EQ(t.stalls, 1u);
  EXPECT_DOUBLE_EQ(t.stall_s, 3.0);  // from 0.0025 to 3.0025
  // s1 was read ahead during the stall (2000 B < 2 x 2 x 1000 B of slots): it only copies,
  // 2000 / 2e6 = 0.001 s; then c1's 3 s.
  EXPECT_DOUBLE_EQ(t.wall_s, 3.0025 + 0.001 + 3.0);
}

TEST(Predict, FillsAfterFreeArenaWaitForTheDrain) {
  LoadPlan p = Base();
  const StepIndex f0 = Fill(p, 0);
  Add(p, {.kind = StepKind::kFreeArena, .waits = {Launch(p, 0, {f0})}});
  Fill(p, 3);  // weight w, no waits: still after the drain
  const LoadTimePrediction t = PredictLoad(p, Round());
  EXPECT_DOUBLE_EQ(t.wall_s, 3.0025 + 1000 / 2e6);
  EXPECT_DOUBLE_EQ(t.tail_s, 0);
}

TEST(Predict, ASmallFillCostsAtLeastThePerFillTime) {
  LoadPlan p = Base();
  Fill(p, 0);  // 2000 B: 0.002 s at the pipeline rate
  Fill(p, 1);
  MachineProfile m = Round();
  m.per_fill_s = 0.01;
  m.context_start_s = 1;
  m.setup_s = 0.5;
  m.alloc_s = 0.25;
  const LoadTimePrediction t = PredictLoad(p, m);
  EXPECT_DOUBLE_EQ(t.wall_s, 0.0005 + 2 * 0.01);
  EXPECT_DOUBLE_EQ(t.setup_s, 1 + 0.5 + 2 * 0.25);
  EXPECT_DOUBLE_EQ(t.total_s, t.setup_s + t.wall_s);
  m.per_fill_s = 0.001;  // below the bytes' time: hidden
  EXPECT_DOUBLE_EQ(PredictLoad(p, m).wall_s, 0.0005 + 2 * 0.002);
}

// A column slice's runs under a chunk are packed: one request, a pread per run over the threads
// (kDefaultPerRunSeconds each); runs of a chunk or more are a request each.
TEST(Predict, AColumnSlicePaysAPreadPerRun) {
  LoadPlan p = Base();
  Fill(p, 3);  // w: 1000 B
  MachineProfile m = Round();
  m.per_fill_s = 1e-9;  // below the bytes' time
  m.io_threads = 2;
  const LoadTimePrediction whole = PredictLoad(p, m);
  p.buffers[3].shape = std::vector<uint64_t>{10, 50};
  p.buffers[3].tensor = "w";
  p.buffers[3].dtype = base::Dtype::kBF16;  // 10 x 50 x 2 B: the buffer's 1000 B
  p.buffers[3].slice = verifier::TensorSlice{.dim = 1, .start = 50, .length = 50};
  EXPECT_EQ(FillRuns(p.buffers[3]), 10u);
  const LoadTimePrediction sliced = PredictLoad(p, m);
  EXPECT_NEAR(sliced.wall_s - whole.wall_s, 10 * kDefaultPerRunSeconds / 2, 1e-12);
  EXPECT_EQ(sliced.fills, 1u);
  EXPECT_EQ(sliced.slice_runs, 10u);  // said, with the time they add
  EXPECT_NEAR(sliced.slice_runs_s, 10 * kDefaultPerRunSeconds / 2, 1e-12);
  EXPECT_EQ(sliced.slices_unweighed, 1u);  // no extent: read by runs, the span not weighed
  EXPECT_EQ(sliced.read_bytes, sliced.fill_bytes);
  EXPECT_NE(PredictionText(sliced, m).find("slices: 1 strided; 1 by runs (10 runs a pread each"),
            std::string::npos)
      << PredictionText(sliced, m);
  EXPECT_NE(PredictionText(sliced, m).find("1 of them without the tensor's extent"),
            std::string::npos)
      << PredictionText(sliced, m);
  EXPECT_EQ(whole.slice_runs, 0u);
  EXPECT_EQ(PredictionText(whole, m).find("slices:"), std::string::npos);
  m.per_run_s = 4e-6;  // a profile's calibrated figure (calibrate's run probe) takes its place
  EXPECT_NEAR(PredictLoad(p, m).wall_s - whole.wall_s, 10 * 4e-6 / 2, 1e-12);
  m.per_run_s = 0;
  const uint64_t chunk = m.chunk_bytes;
  m.chunk_bytes = 50;  // runs of 100 B: a request each
  m.per_fill_s = 0.01;
  EXPECT_EQ(PredictLoad(p, m).fills, 10u);
  m.chunk_bytes = chunk;
  m.per_fill_s = 1e-9;
  p.buffers[3].slice = verifier::TensorSlice{.dim = 0, .start = 10, .length = 10};  // one run
  EXPECT_DOUBLE_EQ(PredictLoad(p, m).wall_s, whole.wall_s);
}

// Buffer w (1000 B) as the columns [50, 100) of a 10 x 100 BF16 tensor: 10 runs of 100 B,
// 200 B apart, the first 100 B in; span 1900 B.
void SliceColumns(PlannedBuffer& b) {
  b.shape = std::vector<uint64_t>{10, 50};
  b.dtype = base::Dtype::kBF16;
  b.tensor = "w";
  b.slice = verifier::TensorSlice{.dim = 1, .start = 50, .length = 50, .extent = 100};
}

// With its tensor's extent the plan weighs a column slice's span against its runs, as the
// load's --slice-read auto does (slice_read.h): 10 runs of 100 B, 200 B apart, span 1900 B.
TEST(Predict, AColumnSliceWithItsExtentIsReadTheCheaperWay) {
  LoadPlan p = Base();
  Fill(p, 3);  // w: 1000 B
  MachineProfile m = Round();
  m.per_fill_s = 1e-9;
  m.per_page_s = 1;  // a second a page: the map never wins here (the next test weighs it)
  const LoadTimePrediction whole = PredictLoad(p, m);
  SliceColumns(p.buffers[3]);
  const std::optional<base::SliceRuns> runs = PlannedSliceRuns(p.buffers[3]);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(*runs, (base::SliceRuns{.first = 100, .run_bytes = 100, .count = 10, .stride = 200}));
  // 900 B between the runs at 4e6 B/s (225 us) against 10 preads of 1 us over 2 threads (5 us).
  const LoadTimePrediction cheap_runs = PredictLoad(p, m);
  EXPECT_EQ(cheap_runs.slices_by_runs, 1u);
  EXPECT_EQ(cheap_runs.slices_by_span, 0u);
  EXPECT_EQ(cheap_runs.read_bytes, 1000u);
  EXPECT_NEAR(cheap_runs.wall_s - whole.wall_s, 10 * 1e-6 / 2, 1e-12);
  m.per_run_s = 1e-3;  // 5 ms of preads: the span is cheaper
  const LoadTimePrediction span = PredictLoad(p, m);
  EXPECT_EQ(span.slices_by_span, 1u);
  EXPECT_EQ(span.slice_runs, 0u);
  EXPECT_EQ(span.read_bytes, 1900u);
  EXPECT_NEAR(span.slice_span_s, 900 / 4e6, 1e-12);
  EXPECT_NEAR(span.wall_s - whole.wall_s, 900 / 4e6, 1e-12);
  const std::string text = PredictionText(span, m);
  EXPECT_NE(text.find("1 by span (0.00 GB between their runs, 0.000 s); reads 0.00 GB for 0.00 "
                      "GB filled (1.900x)"),
            std::string::npos)
      << text;
  EXPECT_EQ(PredictionJson(span, m)["slices"]["by_span"], 1);
  EXPECT_EQ(PredictionJson(span, m)["read_bytes"], 1900);
  // The same choice the CUDA backend makes at the load with the profile's figures.
  EXPECT_EQ(
      ChooseSliceRead(*runs, {.per_run_s = 1e-3, .read_rate = 4e6, .per_page_s = 1, .threads = 2}),
      SliceRead::kSpan);
  EXPECT_EQ(
      ChooseSliceRead(*runs, {.per_run_s = 1e-6, .read_rate = 4e6, .per_page_s = 1, .threads = 2}),
      SliceRead::kRuns);
}

// The plan weighs the map too, at the profile's per-page cost (calibrate's map probe) or the
// default: the same slice (10 runs of 100 B, span 1900 B at 100 B in: one page) costs one page
// over the threads. Reading with O_DIRECT, the map is not weighed.
TEST(Predict, AColumnSliceIsMappedWhereItsPagesCostLeast) {
  LoadPlan p = Base();
  Fill(p, 3);
  MachineProfile m = Round();
  m.per_fill_s = 1e-9;
  const LoadTimePrediction whole = PredictLoad(p, m);
  SliceColumns(p.buffers[3]);
  const std::optional<base::SliceRuns> runs = PlannedSliceRuns(p.buffers[3]);
  ASSERT_TRUE(runs.has_value());
  EXPECT_EQ(SpanPages(*runs), 1u);
  m.per_page_s = 2e-6;     // 1 page and 10 runs over 2 threads: 1.5 us, under the runs' 5 us
  m.per_map_run_s = 1e-7;  // and the span's 225
  const LoadTimePrediction mapped = PredictLoad(p, m);
  EXPECT_EQ(mapped.slices_by_map, 1u);
  EXPECT_EQ(mapped.strided_slices(), 1u);
  EXPECT_EQ(mapped.slice_map_pages, 1u);
  EXPECT_EQ(mapped.slice_map_runs, 10u);
  EXPECT_NEAR(mapped.slice_map_s, 1.5e-6, 1e-15);
  EXPECT_NEAR(mapped.wall_s - whole.wall_s, 1.5e-6, 1e-12);
  EXPECT_EQ(mapped.read_bytes, 1000u);  // the runs' bytes are copied out of the pages
  EXPECT_EQ(PredictionJson(mapped, m)["slices"]["by_map"], 1);
  EXPECT_EQ(PredictionJson(mapped, m)["slices"]["map_pages"], 1);
  EXPECT_EQ(PredictionJson(mapped, m)["slices"]["map_runs"], 10);
  const std::string text = PredictionText(mapped, m);
  EXPECT_NE(text.find("map (the span's pages at 2.000 us a page, the profile's, and its runs at "
                      "0.1000 us a run, the profile's, over 2 threads): 1 slices, 1 pages, 10 "
                      "runs"),
            std::string::npos)
      << text;
  // From an evicted file the page's bytes beyond the runs (4096 - 1000) come from the disk.
  const LoadTimePrediction cold = PredictLoad(p, m, {.cache = Cache::kCold});
  EXPECT_EQ(cold.slices_by_map, 1u);
  EXPECT_EQ(cold.read_bytes, 4096u);
  EXPECT_NEAR(cold.slice_map_s, 1.5e-6 + 3096 / m.direct_read, 1e-12);
  m.per_page_s = 2e-5;  // 10.5 us: the runs are cheaper again
  EXPECT_EQ(PredictLoad(p, m).slices_by_runs, 1u);
  m.per_page_s = 1e-6;
  m.per_map_run_s = 1e-6;  // 5.5 us: the runs' copies outweigh the page
  EXPECT_EQ(PredictLoad(p, m).slices_by_runs, 1u);
  m.per_page_s = 0;  // none in the profile: the defaults, far under the runs' 5 us
  m.per_map_run_s = 0;
  const LoadTimePrediction by_default = PredictLoad(p, m);
  EXPECT_EQ(by_default.slices_by_map, 1u);
  EXPECT_NEAR(by_default.slice_map_s, (kDefaultPerPageSeconds + 10 * kDefaultPerMapRunSeconds) / 2,
              1e-15);
  EXPECT_NE(PredictionText(by_default, m).find("a page, the default, over 2 threads"),
            std::string::npos)
      << PredictionText(by_default, m);
  EXPECT_EQ(ChooseSliceRead(
                *runs, {.per_run_s = 1e-6, .read_rate = 4e6, .per_page_s = 2e-6, .threads = 2}),
            SliceRead::kMap);
  EXPECT_EQ(ChooseSliceRead(*runs, SliceCostsOf(m, /*direct_io=*/true)), SliceRead::kRuns);
  EXPECT_EQ(SliceCostsOf(m, true).per_page_s, 0);
  EXPECT_EQ(SliceReadSeconds(SliceRead::kMap, *runs, {.per_page_s = 0}),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(SliceReadSeconds(SliceRead::kSpan, *runs, {.read_rate = 0}),
            std::numeric_limits<double>::infinity());
}

// A span's pages: from the page of its first byte to the page of its last.
TEST(SliceRead, SpanPagesCountThePagesTheSpanTouches) {
  EXPECT_EQ(SpanPages({.first = 0, .run_bytes = 4096, .count = 1}), 1u);
  EXPECT_EQ(SpanPages({.first = 4095, .run_bytes = 2, .count = 1}), 2u);
  EXPECT_EQ(SpanPages({.first = 100, .run_bytes = 100, .count = 3, .stride = 8192}), 5u);
  EXPECT_EQ(SpanPages({.first = 0, .run_bytes = 0, .count = 3, .stride = 8192}), 0u);
  EXPECT_EQ(SpanPages({}), 0u);
}

TEST(Predict, UnmeasuredKernelsAreNamed) {
  LoadPlan p = Base();
  p.calls[0].kernel = "other";
  Launch(p, 0, {Fill(p, 0)});
  const LoadTimePrediction t = PredictLoad(p, Round());
  EXPECT_EQ(t.unmeasured_kernels, std::vector<std::string>{"other"});
  EXPECT_DOUBLE_EQ(t.derive_s, 3000 / 1e9);
}

// Four calls, each reading its own 4000-byte source: with prefetch 0 each source reuses the
// bytes of the one before, so every fill waits for the previous launch; with prefetch 1 the
// next fill overlaps the running launch.
TEST(Predict, PrefetchOverlapsCopiesWithDerive) {
  testing::ManifestMaker mk("seq", 1, 0);
  for (int i = 0; i < 4; ++i) {
    mk.Bytes(fmt::format("s{}", i), verifier::BufferKind::kSource, 4000)
        .Bytes(fmt::format("x{}", i), verifier::BufferKind::kCarry, 4000)
        .Call("derive.p", {fmt::format("s{}", i)}, {fmt::format("x{}", i)});
  }
  const verifier::Manifest m = mk.Done();
  MachineProfile prof = Round();
  prof.default_kernel_rate = 8000 / 0.004;  // each launch about as long as its fill (0.004 s)
  const LoadTimePrediction p0 =
      PredictLoad(test_support::PlanOf(m, {.prefetch = 0, .alignment = 1}), prof);
  const LoadTimePrediction p1 =
      PredictLoad(test_support::PlanOf(m, {.prefetch = 1, .alignment = 1}), prof);
  EXPECT_GT(p0.stalls, 0u);
  EXPECT_GT(p0.wall_s, p1.wall_s);
  EXPECT_LT(p1.stall_s, p0.stall_s);
  // Never faster than the bytes at the faster of the two copy rates, nor than the derive work.
  for (const LoadTimePrediction& t : {p0, p1}) {
    EXPECT_GE(t.wall_s, 16000 / 2e6);
    EXPECT_GE(t.wall_s, t.derive_s);
    EXPECT_EQ(t.fill_bytes, 16000u);
    EXPECT_EQ(t.launches, 4u);
  }
}

}  // namespace
}  // namespace loadplan::simulator::timing
