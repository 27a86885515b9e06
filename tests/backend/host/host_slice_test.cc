// Buffers bound by a `slice` of a checkpoint tensor through the host backend (docs/manifest.md,
// "Slices"): every dtype the tensor-parallel split meets (BF16, F8_E4M3, I8, MXFP4 blocks and
// their E8M0 scales as U8, F4) sliced along every dimension of a 3-D tensor, each buffer equal
// to an element-wise slicing of the whole tensor written here (no run arithmetic in the
// reference); the runs are those base::RunsOfSlice says; a slice outside its tensor, a shape
// that does not match, refused by the preflight naming buffer, tensor and shapes; a read fault
// at every run of a strided slice stops the load and names the tensor and the run's offset.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors_write.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "base/slice_runs.h"
#include "simulator/timing/predict.h"
#include "simulator/timing/profile.h"
#include "tests/verified_plan.h"
#include "tests/backend/slice_fixture.h"
#include "verifier/builder.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using base::Dtype;
using simulator::LoadPlan;
using test_support::Buffer;
using test_support::Reference;
using test_support::SliceManifest;
using test_support::Slices;
using test_support::TempCheckpoint;
using test_support::Tensor;
using verifier::TensorSlice;

// The tensors written into one checkpoint, opened, for every test.
class HostSlices : public ::testing::Test {
 protected:
  void SetUp() override {
    base::Result<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir_.dir.string());
    ASSERT_TRUE(c.ok()) << c.status().message();
    ckpt_ = std::move(*c);
  }
  const std::vector<Tensor> tensors = test_support::Tensors();
  const TempCheckpoint dir_{tensors};
  std::unique_ptr<Checkpoint> ckpt_;
};

TEST_F(HostSlices, EveryDtypeAlongEveryDimEqualsElementWiseSlicing) {
  size_t compared = 0;
  for (uint64_t dim = 0; dim < 3; ++dim) {
    const verifier::Manifest m = SliceManifest(tensors, dim);
    EXPECT_EQ(m.schema, 2);
    const LoadPlan plan = test_support::PlanOf(m);
    ASSERT_TRUE(CheckBindings(plan, *ckpt_).ok()) << CheckBindings(plan, *ckpt_).message();
    for (const uint64_t chunk : {uint64_t{3}, uint64_t{1} << 20}) {  // runs in pieces, whole
      HostBackend host(plan, *ckpt_, {.read_chunk_bytes = chunk});
      const ExecuteResult r = Execute(plan, host);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      for (const Tensor& t : tensors) {
        for (const auto& [name, s] : Slices(t)) {
          if (s.dim != dim) continue;
          const auto got = host.Bytes(Buffer(plan, name).id);
          const std::vector<uint8_t> want = Reference(t, s);
          ASSERT_EQ(got.size(), want.size()) << name;
          EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << name;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 36u);  // 6 tensors x 3 dims x 2 chunk sizes
}

// The GPU test CudaSlices.EveryModeDtypeAndDimEqualsElementWiseSlicing compares the load's
// auto with the plan's choice on its fixture (48 x 40 tensors, 3 threads, the default per-run
// cost, kFixtureReadRate and kFixturePerPageSeconds): the plan takes all
// three ways there, so that comparison can tell them apart.
TEST(SliceChoice, TheGpuTestsFixtureIsReadEveryWay) {
  simulator::timing::MachineProfile m = simulator::timing::DefaultH200Profile();
  m.page_cache_read = test_support::kFixtureReadRate;
  m.per_run_s = 0;  // the default per-run cost, as the GPU test's CudaOptions
  m.per_page_s = test_support::kFixturePerPageSeconds;
  m.io_threads = 3;
  for (const uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20}) {
    m.chunk_bytes = chunk;
    uint32_t runs = 0, span = 0, map = 0;
    for (uint64_t dim = 1; dim < 3; ++dim) {
      const simulator::timing::LoadTimePrediction p = simulator::timing::PredictLoad(
          test_support::PlanOf(test_support::SliceManifest(test_support::Tensors(48, 40), dim)), m);
      EXPECT_EQ(p.strided_slices(), 6u) << dim;
      EXPECT_EQ(p.slices_unweighed, 0u) << dim;  // the fixture's slices carry their extent
      runs += p.slices_by_runs;
      span += p.slices_by_span;
      map += p.slices_by_map;
    }
    EXPECT_GT(runs, 0u) << chunk;
    EXPECT_GT(span, 0u) << chunk;
    EXPECT_GT(map, 0u) << chunk;
  }
}

TEST_F(HostSlices, RunsAreOnePerOuterIndexARowApart) {
  const LoadPlan plans[] = {test_support::PlanOf(SliceManifest(tensors, 0)),
                            test_support::PlanOf(SliceManifest(tensors, 1)),
                            test_support::PlanOf(SliceManifest(tensors, 2))};
  const auto runs = [&](const std::string& name) {
    const LoadPlan& plan = plans[name.back() - '0'];
    const base::Result<std::vector<FillPart>> parts = LocateFill(Buffer(plan, name), *ckpt_);
    EXPECT_TRUE(parts.ok()) << parts.status().message();
    return parts.ok() && parts->size() == 1 ? (*parts)[0].runs : base::SliceRuns{};
  };
  // bf16 [4, 6, 8]: rows of 16 bytes; dim 0 [1, 3): one run of 2 x 96 bytes at 96
  EXPECT_EQ(runs("bf16.d0"), (base::SliceRuns{.first = 96, .run_bytes = 192, .count = 1}));
  // dim 1 [1, 4): 4 runs of 3 rows (48 bytes), 96 bytes apart, from 16
  EXPECT_EQ(runs("bf16.d1"),
            (base::SliceRuns{.first = 16, .run_bytes = 48, .count = 4, .stride = 96}));
  // dim 2 [1, 5): 24 runs of 8 bytes, 16 apart, from 2
  EXPECT_EQ(runs("bf16.d2"),
            (base::SliceRuns{.first = 2, .run_bytes = 8, .count = 24, .stride = 16}));
  // MXFP4 blocks [16, 48) of 64 bytes a row: 24 runs of 32 bytes
  EXPECT_EQ(runs("blocks.d2"),
            (base::SliceRuns{.first = 16, .run_bytes = 32, .count = 24, .stride = 64}));
  // F4 elements [2, 6) of 8 (4 bytes a row): 24 runs of 2 bytes from byte 1
  EXPECT_EQ(runs("f4.d2"), (base::SliceRuns{.first = 1, .run_bytes = 2, .count = 24, .stride = 4}));
}

TEST_F(HostSlices, ASliceThatDoesNotFitItsTensorIsRefusedNamingBoth) {
  verifier::ManifestBuilder b("bad");
  b.Checkpoint("past", "bf16", Dtype::kBF16, {4, 6, 4}, {.slice = TensorSlice{2, 6, 4}});
  b.Checkpoint("wrong", "i8", Dtype::kI8, {2, 5, 8}, {.slice = TensorSlice{0, 0, 2}});
  b.Checkpoint("extent", "fp8", Dtype::kF8E4M3, {4, 3, 8}, {.slice = TensorSlice{1, 0, 3, 5}});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok());
  const LoadPlan plan = test_support::PlanOf(built.manifest);
  const std::string msg = CheckBindings(plan, *ckpt_).message();
  EXPECT_NE(msg.find("buffer past (/buffers/past): tensor bf16 of shape [4, 6, 8] in "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("slice [6, 10) of dimension 2 is not inside its extent 8"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("buffer wrong (/buffers/wrong): tensor i8 has shape [4, 6, 8] in "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("has shape [2, 6, 8], the manifest says [2, 5, 8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("buffer extent (/buffers/extent): tensor fp8 has shape [4, 6, 8] in "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(": 6 along dimension 1, the manifest's slice says extent 5"),
            std::string::npos)
      << msg;
  EXPECT_FALSE(LocateFill(Buffer(plan, "past"), *ckpt_).ok());
  EXPECT_FALSE(LocateFill(Buffer(plan, "extent"), *ckpt_).ok());
  EXPECT_FALSE(LocateFill(Buffer(plan, "wrong"), *ckpt_).ok());
}

// EIO at each run of a strided slice (24 runs of 8 bytes, read one run per read): the load
// stops with kIo naming the file, the tensor and the run's byte offset in it.
TEST_F(HostSlices, AReadFaultAtEveryRunNamesTheTensorAndTheRunsOffset) {
  verifier::ManifestBuilder b("one");
  b.Checkpoint("cols", "bf16", Dtype::kBF16, {4, 6, 4}, {.slice = TensorSlice{2, 1, 4}});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok());
  const LoadPlan plan = test_support::PlanOf(built.manifest);
  for (uint64_t k = 0; k < 24; ++k) {
    HostBackend host(plan, *ckpt_, {.io_faults = {.eio_at_read = k}});
    const ExecuteResult r = Execute(plan, host);
    ASSERT_FALSE(r.status.ok()) << k;
    EXPECT_EQ(r.status.kind(), base::ErrorKind::kIo) << r.status.message();
    EXPECT_NE(r.status.message().find("tensor bf16"), std::string::npos) << r.status.message();
    EXPECT_NE(r.status.message().find(fmt::format("byte offset {} ", 2 + 16 * k)),
              std::string::npos)
        << r.status.message();
    EXPECT_TRUE(r.cleanup.ok());
  }
}

}  // namespace
}  // namespace loadplan::backend
