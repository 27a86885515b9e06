// The public API on a GPU: a loaded model lists every resident buffer with a device pointer
// inside its pool, its bytes equal the host backend's, two models live at once, and device
// memory returns to its baseline after a model goes, after a failed load and after a
// cancelled one; ten load/free rounds do not grow. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "api/loadplan.h"
#include "backend/load_output.h"
#include "simulator/plan_totals.h"
#include "tests/gpu/small_gpt_oss.h"

namespace loadplan::api {
namespace {

namespace fs = std::filesystem;
using simulator::LoadPlan;

uint64_t FreeBytes() {
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

class ApiGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend::PrepareCudaProcess();
    if (!backend::DeviceUsable().ok()) return;
    dir_ = (fs::path(::testing::TempDir()) / ("loadplan-api-gpu-" + std::to_string(::getpid())))
               .string();
    model_ = new backend::Model(backend::MakeModel(dir_));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (const base::Status why = backend::DeviceUsable(); !why.ok()) GTEST_SKIP() << why.message();
    ASSERT_NE(model_, nullptr);
    ASSERT_EQ(model_->error, "");
    ASSERT_EQ(cudaFree(nullptr), cudaSuccess);
  }
  std::shared_ptr<const LoadPlan> MakePlan(simulator::PlanOptions o = {}) const {
    base::Result<LoadPlan> plan = PlanLoad(*model_->verified, o);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    return std::make_shared<const LoadPlan>(std::move(*plan));
  }
  base::Result<LoadedModel> LoadSmall(LoadOptions o = {}) const {
    o.io_threads = 3;
    o.chunk_bytes = 64 << 10;
    return LoadPlanned(MakePlan(), *model_->checkpoint, o);
  }
  // The baseline after one load came and went (module loading and the allocator's own first
  // allocations are not the model's).
  uint64_t WarmBaseline() const {
    {
      base::Result<LoadedModel> warm = LoadSmall();
      EXPECT_TRUE(warm.ok()) << warm.status().message();
    }
    return FreeBytes();
  }
  static backend::HostComparison Compare(const LoadedModel& m, const backend::Checkpoint& ckpt) {
    return backend::CompareWithHost(
        m.plan(), ckpt,
        [&m](simulator::BufferId b, uint64_t offset, std::span<uint8_t> out) {
          return m.CopyOut(b, offset, out);
        },
        true);
  }

  static inline backend::Model* model_ = nullptr;
  static inline std::string dir_;
};

TEST_F(ApiGpuTest, ListsEveryResidentBufferInsideItsPoolWithTheHostBackendsBytes) {
  base::Result<LoadedModel> m = LoadSmall();
  ASSERT_TRUE(m.ok()) << m.status().message();
  const LoadPlan& plan = m->plan();
  size_t resident = 0;
  for (const simulator::PlannedBuffer& b : plan.buffers)
    resident += b.residence == simulator::Residence::kResident;
  ASSERT_EQ(m->tensors().size(), resident);
  const auto* base = static_cast<const uint8_t*>(m->tensors().front().data) -
                     plan.buffer(m->tensors().front().id).offset;
  for (const LoadedTensor& t : m->tensors()) {
    const simulator::PlannedBuffer& b = plan.buffer(t.id);
    EXPECT_EQ(t.name, b.name);
    EXPECT_EQ(t.bytes, b.bytes);
    EXPECT_EQ(static_cast<const uint8_t*>(t.data), base + b.offset) << t.name;
    EXPECT_LE(b.offset + b.bytes, m->device_bytes()) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % plan.alignment, 0u) << t.name;
  }
  const LoadedTensor* fc1 = m->Find("l0.fc1_w");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->kind, verifier::BufferKind::kCarry);
  for (const LoadedTensor& t : m->tensors()) {  // the manifest's export flag, carried through
    const verifier::Buffer* b = model_->verified->manifest().FindBuffer(t.name);
    ASSERT_NE(b, nullptr) << t.name;
    EXPECT_EQ(t.exported, b->exported) << t.name;
  }
  EXPECT_EQ(m->Find("no.such.tensor"), nullptr);
  const backend::HostComparison cmp = Compare(*m, *model_->checkpoint);
  EXPECT_TRUE(cmp.ok()) << cmp.host_error << (cmp.mismatches.empty() ? "" : cmp.mismatches.front());
  EXPECT_EQ(m->report().memory.peak_allocated, m->report().predicted_peak);
  EXPECT_EQ(m->report().fill_bytes, m->report().times.bytes_filled);
}

TEST_F(ApiGpuTest, MemoryReturnsToTheBaselineWhenTheModelGoes) {
  const uint64_t baseline = WarmBaseline();
  {
    base::Result<LoadedModel> m = LoadSmall();
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_LT(FreeBytes(), baseline);  // the pool is held
    EXPECT_GE(baseline - FreeBytes(), m->device_bytes());
  }
  EXPECT_EQ(FreeBytes(), baseline);
  base::Result<LoadedModel> again = LoadSmall();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->Release().ok());
  EXPECT_TRUE(again->tensors().empty());
  EXPECT_EQ(FreeBytes(), baseline);
}

TEST_F(ApiGpuTest, TwoModelsLiveAtOnceAndOneAfterTheOther) {
  const uint64_t baseline = WarmBaseline();
  {
    base::Result<LoadedModel> a = LoadSmall();
    base::Result<LoadedModel> b = LoadSmall();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NE(a->Find("l0.fc1_w")->data, b->Find("l0.fc1_w")->data);
    EXPECT_TRUE(Compare(*a, *model_->checkpoint).ok());
    EXPECT_TRUE(Compare(*b, *model_->checkpoint).ok());
  }
  EXPECT_EQ(FreeBytes(), baseline);
}

TEST_F(ApiGpuTest, TenLoadAndFreeRoundsDoNotGrow) {
  const uint64_t baseline = WarmBaseline();
  for (int i = 0; i < 10; ++i) {
    base::Result<LoadedModel> m = LoadSmall();
    ASSERT_TRUE(m.ok()) << i << ": " << m.status().message();
    m = base::Status::Error("dropped");  // the model goes here
    EXPECT_EQ(FreeBytes(), baseline) << "after round " << i;
  }
}

TEST_F(ApiGpuTest, AFailedLoadSaysHowMuchAndGivesEverythingBack) {
  const uint64_t baseline = WarmBaseline();
  const base::Result<LoadedModel> m = LoadSmall({.memory_limit = uint64_t{1} << 20});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().kind(), base::ErrorKind::kOutOfMemory) << m.status().message();
  EXPECT_NE(m.status().message().find("over the memory limit"), std::string::npos)
      << m.status().message();
  EXPECT_EQ(FreeBytes(), baseline);
}

TEST_F(ApiGpuTest, ACancelledLoadStopsAndGivesEverythingBack) {
  const uint64_t baseline = WarmBaseline();
  std::stop_source before;
  before.request_stop();
  const base::Result<LoadedModel> early = LoadSmall({.stop = before.get_token()});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().kind(), base::ErrorKind::kCancelled) << early.status().message();
  EXPECT_EQ(FreeBytes(), baseline);

  std::stop_source during;  // stopped by the first progress report, mid-load
  const base::Result<LoadedModel> mid =
      LoadSmall({.progress = [&during](uint64_t, uint64_t) { during.request_stop(); },
                 .stop = during.get_token()});
  ASSERT_FALSE(mid.ok());
  EXPECT_EQ(mid.status().kind(), base::ErrorKind::kCancelled) << mid.status().message();
  EXPECT_EQ(FreeBytes(), baseline);
}

TEST_F(ApiGpuTest, ProgressGrowsToTheTotal) {
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  const base::Result<LoadedModel> m = LoadSmall(
      {.progress = [&seen](uint64_t done, uint64_t total) { seen.emplace_back(done, total); }});
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_FALSE(seen.empty());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].first, seen[i - 1].first);
  EXPECT_EQ(seen.back().first, seen.back().second);
  EXPECT_EQ(seen.back().second, simulator::FillBytes(m->plan()));
}

}  // namespace
}  // namespace loadplan::api
