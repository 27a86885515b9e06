// The public API without a GPU: check and plan agree with the verifier and planner, bad
// input is a clear error of the right kind, and Load refuses cleanly when there is no device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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

TEST(Api, LoadOfAMissingCheckpointIsIo) {
  const verifier::CheckOutput out = CheckText(examples::ExampleText("tiny"));
  ASSERT_TRUE(out.result.verified.has_value());
  const base::Result<LoadedModel> r = Load(*out.result.verified, std::string("/nonexistent/ckpt"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kIo) << r.status().message();
}

// Without a GPU (CI) a load is a kDevice error that says why; with one, tests/gpu loads.
TEST(Api, LoadWithoutADeviceIsADeviceError) {
  if (backend::NoDeviceReason().empty())
    GTEST_SKIP() << "a GPU is present: tests/gpu/api_gpu_test.cc";
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
