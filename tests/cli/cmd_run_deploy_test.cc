// `loadplan run DEPLOY.json` picks its stage from the launcher's environment (docs/deploy.md):
// the stage RANK names, refused when the world size is not the stage count; through
// cli::RunRun as the command runs it (no GPU needed: each case stops before the device).
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cli/cmd_run.h"

namespace loadplan::cli {
namespace {

namespace fs = std::filesystem;

class RunDeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("run_deploy_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(std::string(LOADPLAN_SOURCE_DIR) + "/examples/tiny.json", dir_ / "a.json");
    std::ofstream(dir_ / "b.json") << "{";  // stage 1 does not parse: its errors name it
    std::ofstream(dir_ / "d.json")
        << R"({"deployment": "t2", "stages": [{"manifest": "a.json"}, {"manifest": "b.json"}]})";
    for (const char* v : {"RANK", "LOCAL_RANK", "WORLD_SIZE"}) ::unsetenv(v);
  }
  void TearDown() override {
    for (const char* v : {"RANK", "LOCAL_RANK", "WORLD_SIZE"}) ::unsetenv(v);
    fs::remove_all(dir_);
  }
  static void Torchrun(const char* rank) {
    ::setenv("RANK", rank, 1);
    ::setenv("LOCAL_RANK", rank, 1);
    ::setenv("WORLD_SIZE", "2", 1);
  }
  // RunRun's exit code and what it printed on stderr.
  std::pair<int, std::string> Run() const {
    RunCliOptions o;
    o.manifest = (dir_ / "d.json").string();
    o.checkpoint = (dir_ / "no-checkpoint").string();
    ::testing::internal::CaptureStderr();
    const int rc = RunRun(o);
    return {rc, ::testing::internal::GetCapturedStderr()};
  }
  fs::path dir_;
};

TEST_F(RunDeployTest, WithoutALauncherTwoStagesAreRefused) {
  const auto [rc, err] = Run();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("deployment t2 has 2 stages, but 1 process was started (no launcher: 1): "
                     "start one process per stage (torchrun --nproc-per-node 2"),
            std::string::npos)
      << err;
}

TEST_F(RunDeployTest, RankZeroLoadsStageZero) {
  Torchrun("0");
  const auto [rc, err] = Run();  // a.json verifies; the missing checkpoint stops it next
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("no-checkpoint: No such file or directory"), std::string::npos) << err;
}

TEST_F(RunDeployTest, RankOneLoadsStageOne) {
  Torchrun("1");
  const auto [rc, err] = Run();  // b.json is the one read, and it does not parse
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("b.json"), std::string::npos) << err;
  EXPECT_EQ(err.find("no-checkpoint"), std::string::npos) << err;
}

TEST_F(RunDeployTest, ABadLauncherVariableIsAUsageError) {
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  const auto [rc, err] = Run();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("RANK is set (torchrun) but LOCAL_RANK is not"), std::string::npos) << err;
}

}  // namespace
}  // namespace loadplan::cli
