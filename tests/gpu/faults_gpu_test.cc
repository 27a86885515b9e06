// The load path under faults, through the public API on a GPU (docs/reliability.md, "The load
// path under faults"): a stop from another thread at spread moments (reading, copying,
// deriving) and at every progress report, a stop during the free, out of device memory at each
// of the two allocations (memory_limit), and two loads at once in two threads. After each:
// cudaMemGetInfo back to the baseline, the /proc/self/fd and thread counts as before, and a
// next load with the host backend's bytes. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "api/loadplan.h"
#include "backend/load_output.h"
#include "tests/gpu/small_gpt_oss.h"

namespace loadplan::api {
namespace {

namespace fs = std::filesystem;
using simulator::LoadPlan;

constexpr uint64_t kSlack = uint64_t{2} << 20;  // the allocator's granularity

uint64_t FreeBytes() {
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

size_t Entries(const char* dir) {
  size_t n = 0;
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Threads of this process, waiting up to 1 s for the count to come down to `want`: a joined
// thread leaves /proc/self/task a moment after pthread_join returns.
size_t Threads(size_t want) {
  size_t n = Entries("/proc/self/task");
  for (int i = 0; i < 100 && n != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = Entries("/proc/self/task");
  }
  return n;
}

// Threads of this process once the count has held for 50 ms (up to 1 s): the baseline is not
// taken while a thread joined a moment ago is still listed.
size_t SettledThreads() {
  size_t n = Entries("/proc/self/task"), same = 0;
  for (int i = 0; i < 100 && same < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const size_t m = Entries("/proc/self/task");
    same = m == n ? same + 1 : 0;
    n = m;
  }
  return n;
}

struct Baseline {
  uint64_t free = 0;
  size_t fds = 0;
  size_t threads = 0;
};

class FaultsGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend::PrepareCudaProcess();
    if (!backend::DeviceUsable().ok()) return;
    dir_ = (fs::path(::testing::TempDir()) / ("loadplan-faults-gpu-" + std::to_string(::getpid())))
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
    plan_ = std::make_shared<const LoadPlan>(*PlanLoad(*model_->verified));
    if (!warmed_) WarmUp();
    base_ = {.free = FreeBytes(), .fds = Entries("/proc/self/fd"), .threads = SettledThreads()};
  }
  // What the CUDA runtime sets up once per process and keeps (local memory grown for loads on
  // several threads at once, the staging behind a pageable copy-out) is set up before the
  // first baseline: each test's figures then hold run alone, first, or in any order.
  void WarmUp() {
    {
      base::Result<LoadedModel> warm = LoadSmall();
      ASSERT_TRUE(warm.ok()) << warm.status().message();
      ASSERT_TRUE(SameAsHost(*warm));
    }
    std::optional<base::Result<LoadedModel>> a, b;
    {
      std::jthread ta([&] { a.emplace(LoadSmall()); });
      std::jthread tb([&] { b.emplace(LoadSmall()); });
    }
    ASSERT_TRUE(a->ok() && b->ok());
    warmed_ = true;
  }
  base::Result<LoadedModel> LoadSmall(LoadOptions o = {}) const {
    o.io_threads = 3;
    o.chunk_bytes = 64 << 10;
    return LoadPlanned(plan_, *model_->checkpoint, o);
  }
  static bool SameAsHost(const LoadedModel& m) {
    const backend::HostComparison c = backend::CompareWithHost(
        m.plan(), *model_->checkpoint,
        [&m](simulator::BufferId b, uint64_t offset, std::span<uint8_t> out) {
          return m.CopyOut(b, offset, out);
        },
        true);
    EXPECT_TRUE(c.ok()) << c.host_error << (c.mismatches.empty() ? "" : c.mismatches.front());
    return c.ok() && c.compared > 0;
  }
  // Device memory, file descriptors and threads where they were.
  void ExpectBack(const std::string& context) const {
    SCOPED_TRACE(context);
    const uint64_t free = FreeBytes();
    EXPECT_LE(base_.free - std::min(free, base_.free), kSlack)
        << "free " << free << " of " << base_.free;
    EXPECT_EQ(Entries("/proc/self/fd"), base_.fds);
    EXPECT_EQ(Threads(base_.threads), base_.threads) << "a thread outlived the load";
  }
  // Everything back where it was, and a next load works with the right bytes.
  void ExpectClean(const std::string& context) const {
    ExpectBack(context);
    SCOPED_TRACE(context);
    base::Result<LoadedModel> next = LoadSmall();
    ASSERT_TRUE(next.ok()) << next.status().message();
    EXPECT_TRUE(SameAsHost(*next));
  }
  // A load that ended: fine, or cancelled with everything given back.
  static void ExpectOkOrCancelled(const base::Result<LoadedModel>& r, int& cancelled) {
    if (r.ok()) return;
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kCancelled) << r.status().message();
    ++cancelled;
  }

  std::shared_ptr<const LoadPlan> plan_;
  Baseline base_;
  static inline bool warmed_ = false;
  static inline backend::Model* model_ = nullptr;
  static inline std::string dir_;
};

TEST_F(FaultsGpuTest, AStopAtSpreadMomentsOfTheLoadGivesEverythingBack) {
  const auto t0 = std::chrono::steady_clock::now();
  { ASSERT_TRUE(LoadSmall().ok()); }
  const auto wall = std::chrono::steady_clock::now() - t0;
  int cancelled = 0;
  constexpr int kMoments = 24;  // 0 .. 1.5 x the wall time: before, reading, deriving, after
  for (int i = 0; i < kMoments; ++i) {
    std::stop_source stop;
    std::jthread canceller([&stop, at = wall * i / 16] {
      std::this_thread::sleep_for(at);
      stop.request_stop();
    });
    const base::Result<LoadedModel> r = LoadSmall({.stop = stop.get_token()});
    canceller.join();
    ExpectOkOrCancelled(r, cancelled);
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("cancel"), std::string::npos);
      ExpectBack("stop at moment " + std::to_string(i));
    }
  }
  EXPECT_GE(cancelled, 2);  // at least the first moments land inside the load
  ExpectClean("after the spread stops");
}

TEST_F(FaultsGpuTest, AStopAtEveryProgressReportGivesEverythingBack) {
  uint32_t reports = 0;
  {
    ASSERT_TRUE(LoadSmall({.progress = [&](uint64_t, uint64_t) { ++reports; }}).ok());
  }
  ASSERT_GE(reports, 1u);
  int cancelled = 0;
  for (uint32_t k = 1; k <= reports + 1; ++k) {
    std::stop_source stop;
    uint32_t seen = 0;
    {
      const base::Result<LoadedModel> r = LoadSmall({.progress =
                                                         [&](uint64_t, uint64_t) {
                                                           if (++seen == k) stop.request_stop();
                                                         },
                                                     .stop = stop.get_token()});
      ExpectOkOrCancelled(r, cancelled);
      // Only a stop from the final report (or none) leaves a model: it came after the load.
      if (r.ok()) {
        EXPECT_GE(k, seen) << "a stop before the last report was not honoured";
      }
    }  // a model that loaded is freed here, before the check
    ExpectClean("stop at progress report " + std::to_string(k));
  }
  EXPECT_GE(cancelled, 1);
}

// The first report with every byte's copy queued comes from the last drain (the derives and
// copies may still run: then the load is cancelled) or is the final report, after the load
// ended (then it changes nothing): whichever it was, no report may follow a stop the load
// ignored.
TEST_F(FaultsGpuTest, AStopWhenEveryCopyIsQueuedCancelsUnlessTheLoadHadEnded) {
  {
    std::stop_source stop;
    uint32_t after = 0;
    const base::Result<LoadedModel> r = LoadSmall({.progress =
                                                       [&](uint64_t done, uint64_t total) {
                                                         if (stop.stop_requested())
                                                           ++after;
                                                         else if (done == total)
                                                           stop.request_stop();
                                                       },
                                                   .stop = stop.get_token()});
    ASSERT_TRUE(stop.stop_requested()) << "no report had every copy queued";
    if (r.ok()) {
      EXPECT_EQ(after, 0u) << "reports followed the stop, yet the load was not cancelled";
    } else {
      EXPECT_EQ(r.status().kind(), base::ErrorKind::kCancelled) << r.status().message();
    }
  }
  ExpectClean("stop when every copy was queued");
}

TEST_F(FaultsGpuTest, AStopDuringTheFreeChangesNothing) {
  std::stop_source stop;
  base::Result<LoadedModel> m = LoadSmall({.stop = stop.get_token()});
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::jthread canceller([&stop] { stop.request_stop(); });
  EXPECT_TRUE(m->Release().ok());
  canceller.join();
  m = base::Status::Error("dropped");
  ExpectClean("stop during the free");
}

TEST_F(FaultsGpuTest, OutOfMemoryAtEachAllocationSaysHowMuchAndGivesEverythingBack) {
  const uint64_t pool = plan_->resident_bytes_rounded;
  const uint64_t arena = plan_->arena_bytes_rounded;
  ASSERT_GT(arena, 0u);
  // 1 MiB: the pool is refused; pool + arena - 1: the pool fits, the arena is refused.
  for (const uint64_t limit : {uint64_t{1} << 20, pool - 1, pool + arena - 1}) {
    const base::Result<LoadedModel> r = LoadSmall({.memory_limit = limit});
    ASSERT_FALSE(r.ok()) << limit;
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kOutOfMemory) << r.status().message();
    EXPECT_NE(r.status().message().find("over the memory limit"), std::string::npos)
        << r.status().message();
    ExpectClean("memory limit " + std::to_string(limit));
  }
}

TEST_F(FaultsGpuTest, TwoLoadsAtOnceInTwoThreadsBothHaveTheHostsBytes) {
  for (int round = 0; round < 3; ++round) {
    std::optional<base::Result<LoadedModel>> a, b;
    {
      std::jthread ta([&] { a.emplace(LoadSmall()); });
      std::jthread tb([&] { b.emplace(LoadSmall()); });
    }
    ASSERT_TRUE(a->ok()) << a->status().message();
    ASSERT_TRUE(b->ok()) << b->status().message();
    EXPECT_NE((*a)->Find("l0.fc1_w")->data, (*b)->Find("l0.fc1_w")->data);
    EXPECT_TRUE(SameAsHost(**a));
    EXPECT_TRUE(SameAsHost(**b));
  }
  ExpectClean("after two loads at once");
}

TEST_F(FaultsGpuTest, TwoLoadsAtOnceOneRefusedOrCancelledTheOtherRight) {
  std::optional<base::Result<LoadedModel>> ok, oom, cancelled;
  std::stop_source stop;
  stop.request_stop();
  {
    std::jthread t1([&] { ok.emplace(LoadSmall()); });
    std::jthread t2([&] { oom.emplace(LoadSmall({.memory_limit = uint64_t{1} << 20})); });
    std::jthread t3([&] { cancelled.emplace(LoadSmall({.stop = stop.get_token()})); });
  }
  ASSERT_TRUE(ok->ok()) << ok->status().message();
  EXPECT_TRUE(SameAsHost(**ok));
  ASSERT_FALSE(oom->ok());
  EXPECT_EQ(oom->status().kind(), base::ErrorKind::kOutOfMemory) << oom->status().message();
  ASSERT_FALSE(cancelled->ok());
  EXPECT_EQ(cancelled->status().kind(), base::ErrorKind::kCancelled);
  ok.reset();
  ExpectClean("after a right, a refused and a cancelled load at once");
}

}  // namespace
}  // namespace loadplan::api
