// Slices through the CUDA backend (issue 30): every dtype of tests/backend/slice_fixture.h
// sliced along every dimension, read run by run, as covering spans gathered on the way to the
// device, and as auto chooses, buffered and O_DIRECT, with chunks small enough that a strided
// slice takes many and large enough that it takes one: every buffer equal to the element-wise
// slicing. A read fault at every read of a strided slice, in both modes, stops the load with
// kIo naming the tensor and gives every device byte back. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/executor.h"
#include "simulator/timing/predict.h"
#include "simulator/timing/profile.h"
#include "tests/backend/slice_fixture.h"
#include "tests/verified_plan.h"

namespace loadplan::backend {
namespace {

using simulator::LoadPlan;
using simulator::timing::SliceRead;
using test_support::Tensor;

const bool kEager = [] {
  PrepareCudaProcess();
  return true;
}();

uint64_t FreeBytes() {
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

// [48, 40, last]: a dim-2 slice of BF16 is 1920 runs of 8 bytes, 16 apart; dim 1 is 48 runs of
// 20 rows.
class CudaSlices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!DeviceUsable().ok()) return;
    dir_ = new test_support::TempCheckpoint(*tensors_);
    base::Result<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir_->dir.string());
    if (c.ok()) ckpt_ = c->release();
    if (ckpt_ == nullptr) return;
    // The runtime's once-per-process memory (tests/gpu/cuda_backend_test.cc's WarmUp), before
    // any baseline: a load in each read mode.
    const LoadPlan plan = test_support::PlanOf(test_support::SliceManifest(*tensors_, 2));
    for (const bool direct : {false, true}) {
      const CudaOptions o{.io_threads = 2, .chunk_bytes = 4096, .direct_io = direct};
      CudaBackend::CreateResult created = CudaBackend::Create(plan, *ckpt_, o);
      if (created.ok()) (void)Execute(plan, **created);
    }
  }
  static void TearDownTestSuite() {
    delete ckpt_;
    ckpt_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (const base::Status why = DeviceUsable(); !why.ok()) GTEST_SKIP() << why.message();
    ASSERT_NE(ckpt_, nullptr);
  }

  static inline const std::vector<Tensor>* tensors_ =
      new std::vector<Tensor>(test_support::Tensors(48, 40));
  static inline test_support::TempCheckpoint* dir_ = nullptr;
  static inline Checkpoint* ckpt_ = nullptr;
};

// A profile with the load's figures: the page-cache read rate and the per-run, per-page and
// per-mapped-run costs it weighs slices by, its threads and chunk.
simulator::timing::MachineProfile ProfileOf(const CudaOptions& o) {
  simulator::timing::MachineProfile m = simulator::timing::DefaultH200Profile();
  m.page_cache_read = o.slice_costs.read_rate;
  m.per_run_s = o.slice_costs.per_run_s;
  m.per_page_s = o.slice_costs.per_page_s;
  m.per_map_run_s = o.slice_costs.per_map_run_s;
  m.io_threads = o.io_threads;
  m.chunk_bytes = o.chunk_bytes;
  return m;
}

TEST_F(CudaSlices, EveryModeDtypeAndDimEqualsElementWiseSlicing) {
  size_t compared = 0;
  for (uint64_t dim = 0; dim < 3; ++dim) {
    const LoadPlan plan = test_support::PlanOf(test_support::SliceManifest(*tensors_, dim));
    for (const SliceRead mode :
         {SliceRead::kRuns, SliceRead::kSpan, SliceRead::kAuto, SliceRead::kMap}) {
      for (const bool direct : {false, true}) {
        for (const uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20}) {
          const std::string what =
              fmt::format("dim {} {} {} chunk {}", dim, simulator::timing::SliceReadName(mode),
                          direct ? "direct" : "buffered", chunk);
          const CudaOptions o{.io_threads = 3,
                              .chunk_bytes = chunk,
                              .direct_io = direct,
                              .slice_read = mode,
                              .slice_costs = {.read_rate = test_support::kFixtureReadRate,
                                              .per_page_s = test_support::kFixturePerPageSeconds}};
          // auto: runs, span and map, the plan's choice (SliceChoice.TheGpuTestsFixture...)
          CudaBackend::CreateResult created = CudaBackend::Create(plan, *ckpt_, o);
          ASSERT_TRUE(created.ok()) << what << ": " << created.status().message();
          const ExecuteResult r = Execute(plan, **created);
          ASSERT_TRUE(r.status.ok()) << what << ": " << r.status.message();
          const CudaTimes t = (*created)->Times();
          EXPECT_EQ(t.slices_as_runs + t.slices_as_span + t.slices_as_map, dim == 0 ? 0u : 6u)
              << what;
          if (dim > 0 && mode == SliceRead::kRuns) {
            EXPECT_EQ(t.slices_as_runs, 6u) << what;
          }
          if (dim > 0 && mode == SliceRead::kSpan) {
            EXPECT_EQ(t.slices_as_span, 6u) << what;
          }
          if (dim > 0 && mode == SliceRead::kMap) {  // O_DIRECT takes the span: no mapping
            EXPECT_EQ(direct ? t.slices_as_span : t.slices_as_map, 6u) << what;
          }
          if ((mode == SliceRead::kRuns || mode == SliceRead::kMap) && !direct) {
            EXPECT_EQ(t.file_bytes, t.bytes_filled) << what;
          }
          if (mode == SliceRead::kAuto && !direct) {  // the plan's choice, slice by slice
            const simulator::timing::LoadTimePrediction p =
                simulator::timing::PredictLoad(plan, ProfileOf(o));
            EXPECT_EQ(t.slices_as_span, p.slices_by_span) << what;
            EXPECT_EQ(t.slices_as_map, p.slices_by_map) << what;
            EXPECT_EQ(t.slices_as_runs, p.slices_by_runs + p.slices_unweighed) << what;
          }
          for (const Tensor& tensor : *tensors_) {
            for (const auto& [name, s] : test_support::Slices(tensor)) {
              if (s.dim != dim) continue;
              std::vector<uint8_t> got;
              ASSERT_TRUE((*created)->CopyOut(test_support::Buffer(plan, name).id, got).ok());
              EXPECT_EQ(got, test_support::Reference(tensor, s)) << what << ": " << name;
              ++compared;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 3u * 4 * 2 * 2 * 6);
}

// EIO at each read of one strided slice (BF16 [48, 40, 8] along dim 2: 1920 runs of 8 bytes),
// run by run, as spans and out of mapped pages, 4 KiB chunks: kIo naming the tensor, every
// device byte given back.
TEST_F(CudaSlices, AReadFaultAtAnyReadOfEitherModeGivesEverythingBack) {
  verifier::ManifestBuilder b("one");
  b.Checkpoint("cols", "bf16", base::Dtype::kBF16, {48, 40, 4},
               {.slice = verifier::TensorSlice{2, 1, 4}});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok());
  const LoadPlan plan = test_support::PlanOf(built.manifest);
  for (const SliceRead mode : {SliceRead::kRuns, SliceRead::kSpan, SliceRead::kMap}) {
    // Runs: a read per run (1920); span: a read per 4 KiB chunk of covering bytes (8); map: a
    // gather per 4 KiB chunk of runs (4).
    const uint64_t reads = mode == SliceRead::kRuns ? 1920 : mode == SliceRead::kSpan ? 8 : 4;
    for (const uint64_t k : {uint64_t{0}, uint64_t{1}, reads / 2, reads - 1}) {
      const CudaOptions o{.io_threads = 2,
                          .chunk_bytes = 4096,
                          .io_faults = {.eio_at_read = k},
                          .slice_read = mode};
      CudaBackend::CreateResult created = CudaBackend::Create(plan, *ckpt_, o);
      ASSERT_TRUE(created.ok()) << created.status().message();
      const ExecuteResult r = Execute(plan, **created);
      const std::string what = fmt::format("{} read {}", SliceReadName(mode), k);
      ASSERT_FALSE(r.status.ok()) << what;
      EXPECT_EQ(r.status.kind(), base::ErrorKind::kIo) << what << ": " << r.status.message();
      EXPECT_NE(r.status.message().find("tensor bf16"), std::string::npos) << r.status.message();
      EXPECT_TRUE(r.cleanup.ok()) << r.cleanup.message();
      EXPECT_EQ((*created)->LiveBytes(), 0u) << what;
      EXPECT_EQ(FreeBytes(), (*created)->Memory().baseline_free) << what;
    }
  }
}

}  // namespace
}  // namespace loadplan::backend
