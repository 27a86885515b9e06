// The public API without a GPU: check and plan agree with the verifier and planner, bad
// input is a clear error of the right kind, and Load refuses cleanly when there is no device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "api/launch.h"
#include "api/loadplan.h"
#include "backend/checkpoint/synthetic.h"
#include "examples/examples.h"
#include "simulator/plan_totals.h"

namespace loadplan::api {
namespace {

namespace fs = std::filesystem;

std::string TempPath(const std::string& name) {
  return (fs::path(::testing::TempDir()) / (name + "-" + std::to_string(::getpid()))).string();
}

TEST(Api, CheckAndPlanTheTinyExample) {
  const verifier::CheckOutput out = CheckText(examples::ExampleText("tiny"));
  ASSERT_TRUE(out.result.verified.has_value());
  const base::Result<simulator::LoadPlan> plan = PlanLoad(*out.result.verified);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(*plan, simulator::Plan(*out.result.verified));  // the planner's plan, checked
  EXPECT_GT(simulator::LoadPeakBytes(*plan), 0u);
}

TEST(Api, CheckFileReportsAnUnreadableFileAsIo) {
  const base::Result<verifier::CheckOutput> missing = CheckFile("/nonexistent/loadplan.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().kind(), base::ErrorKind::kIo);
  EXPECT_NE(missing.status().message().find("/nonexistent/loadplan.json"), std::string::npos);
}

TEST(Api, LoadFilesListsTheDiagnosticsOfABadManifest) {
  const std::string path = TempPath("loadplan-api-bad") + ".json";
  std::ofstream(path) << R"({"schema": 1, "name": "bad", "vars": [], "buffers": [], "kernels": [],
                             "programs": [], "load": {"lanes": 0}})";
  const base::Result<LoadedModel> r = LoadFiles(path, "/nonexistent");
  fs::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_NE(r.status().message().find("does not verify"), std::string::npos)
      << r.status().message();
}

// The front door resolves what it is given before any device: a deployment's stage by rank
// (past the stages: kOption), rank= with a plain manifest or a model folder (kOption), a
// folder that is no model (the importer's error), a deployment's stage read and verified.
TEST(Api, LoadFilesResolvesDeploymentsRanksAndFolders) {
  const std::string dir = TempPath("loadplan-api-source");
  fs::create_directories(dir);
  const std::string tiny = dir + "/tiny.json", bad = dir + "/bad.json";
  std::ofstream(tiny) << examples::ExampleText("tiny");
  std::ofstream(bad) << R"({"schema": 1})";
  const std::string deploy = dir + "/deploy.json";
  std::ofstream(deploy) << R"({"deployment": "d", "tensor_parallel": 2, "stages": [)"
                        << R"({"manifest": "tiny.json"}, {"manifest": "bad.json"}]})";
  // A manifest's text comes back with it (read once: the load verifies it, not the file again);
  // a deployment's stage is named, not read.
  const base::Result<LoadSource> manifest = ResolveSource(tiny, std::nullopt, 0);
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ(manifest->text, examples::ExampleText("tiny"));
  const base::Result<LoadSource> stage = ResolveSource(deploy, 1, 0);
  ASSERT_TRUE(stage.ok()) << stage.status().message();
  EXPECT_TRUE(stage->text.empty());
  EXPECT_EQ(stage->manifest, dir + "/bad.json");
  const auto kind = [](const base::Result<LoadedModel>& r) { return r.status().kind(); };
  EXPECT_EQ(kind(LoadFiles(deploy, "/nonexistent", {}, 2)), base::ErrorKind::kOption);
  EXPECT_EQ(kind(LoadFiles(tiny, "/nonexistent", {}, 0)), base::ErrorKind::kOption);
  EXPECT_EQ(kind(LoadFiles(dir, "", {}, 0)), base::ErrorKind::kOption);  // a folder and a rank
  const base::Result<LoadedModel> stage1 = LoadFiles(deploy, "/nonexistent", {}, 1);
  EXPECT_NE(stage1.status().message().find("bad.json does not verify"), std::string::npos)
      << stage1.status().message();
  const base::Result<LoadedModel> stage0 = LoadFiles(deploy, "/nonexistent", {}, 0);
  EXPECT_EQ(kind(stage0), base::ErrorKind::kIo) << stage0.status().message();  // the checkpoint
  const base::Result<LoadedModel> folder = LoadFiles(dir, "");  // no shard: the import says so
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("found 0"), std::string::npos)
      << folder.status().message();
  fs::remove_all(dir);
}

// One precedence for the I/O pair (run --machine and Python's load(machine=)): given, else the
// profile's, else the built-in defaults; a profile's read rate (page cache, or direct) decides
// a slice's read.
TEST(Api, ApplyMachineTakesTheGivenPairThenTheProfilesThenTheDefaults) {
  simulator::timing::MachineProfile p{.io_threads = 8, .chunk_bytes = 8 << 20};
  p.page_cache_read = 80e9;
  p.direct_read = 2e9;
  LoadOptions o;
  ApplyMachine(nullptr, std::nullopt, std::nullopt, o);
  EXPECT_EQ(o.io_threads, backend::kDefaultIoThreads);
  EXPECT_EQ(o.chunk_bytes, backend::kDefaultChunkBytes);
  EXPECT_EQ(o.slice_costs.read_rate, 0);  // the built-in profile's, at the load
  ApplyMachine(&p, std::nullopt, std::nullopt, o);
  EXPECT_EQ(o.io_threads, 8u);
  EXPECT_EQ(o.chunk_bytes, 8u << 20);
  EXPECT_EQ(o.slice_costs.read_rate, 80e9);
  EXPECT_EQ(o.slice_costs.per_run_s, simulator::timing::kDefaultPerRunSeconds);  // none measured
  p.per_run_s = 2.5e-6;
  ApplyMachine(&p, std::nullopt, std::nullopt, o);
  EXPECT_EQ(o.slice_costs.per_run_s, 2.5e-6);  // the profile's calibrated figure
  ApplyMachine(&p, 16, uint64_t{2} << 20, o);
  EXPECT_EQ(o.io_threads, 16u);
  EXPECT_EQ(o.chunk_bytes, 2u << 20);
  o.direct_io = true;
  ApplyMachine(&p, std::nullopt, std::nullopt, o);
  EXPECT_EQ(o.slice_costs.read_rate, 2e9);
}

TEST(Api, LoadOfAMissingCheckpointIsIo) {
  const verifier::CheckOutput out = CheckText(examples::ExampleText("tiny"));
  ASSERT_TRUE(out.result.verified.has_value());
  const base::Result<LoadedModel> r = Load(*out.result.verified, std::string("/nonexistent/ckpt"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kIo) << r.status().message();
}

// Without a GPU (CI) a load is a kDevice error that says why; with one, tests/gpu loads.
TEST(Api, LoadWithoutADeviceIsADeviceError) {
  if (backend::DeviceUsable().ok()) GTEST_SKIP() << "a GPU is present: tests/gpu/api_gpu_test.cc";
  const verifier::CheckOutput out = CheckText(examples::ExampleText("tiny"));
  ASSERT_TRUE(out.result.verified.has_value());
  const std::string dir = TempPath("loadplan-api-ckpt");
  const base::Result<backend::GenSummary> gen =
      backend::GenerateCheckpoint(out.result.verified->manifest(), {.dir = dir, .seed = 1});
  ASSERT_TRUE(gen.ok()) << gen.status().message();
  const base::Result<LoadedModel> r = Load(*out.result.verified, dir);
  fs::remove_all(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kDevice);
  EXPECT_NE(r.status().message().find("no CUDA device"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace loadplan::api
