// RankFromEnvironment over each launcher's variables, and ChooseStage of a deployment file.
#include "api/launch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

namespace loadplan::api {
namespace {

namespace fs = std::filesystem;

Getenv Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Launch, NoLauncherIsRankZeroOfOne) {
  const base::Result<LaunchRank> r = RankFromEnvironment(Env({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rank, 0u);
  EXPECT_EQ(r->local_rank, 0u);
  EXPECT_EQ(r->world_size, 1u);
  EXPECT_EQ(r->launcher, "");
}

TEST(Launch, EachLaunchersVariables) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string launcher;
  };
  const Case cases[] = {
      {{{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}, "torchrun"},
      {{{"OMPI_COMM_WORLD_RANK", "5"},
        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"OMPI_COMM_WORLD_SIZE", "8"}},
       "Open MPI"},
      {{{"PMI_RANK", "5"}, {"MPI_LOCALRANKID", "1"}, {"PMI_SIZE", "8"}}, "MPICH"},
      {{{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}}, "Slurm"},
  };
  for (const Case& c : cases) {
    const base::Result<LaunchRank> r = RankFromEnvironment(Env(c.env));
    ASSERT_TRUE(r.ok()) << c.launcher << ": " << r.status().message();
    EXPECT_EQ(r->launcher, c.launcher);
    EXPECT_EQ(r->rank, 5u);
    EXPECT_EQ(r->local_rank, 1u);
    EXPECT_EQ(r->world_size, 8u);
  }
  // torchrun's variables win over a Slurm allocation's (torchrun started inside srun).
  const base::Result<LaunchRank> both = RankFromEnvironment(
      Env({{"RANK", "2"}, {"LOCAL_RANK", "2"}, {"WORLD_SIZE", "4"}, {"SLURM_PROCID", "0"}}));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->launcher, "torchrun");
  EXPECT_EQ(both->rank, 2u);
}

TEST(Launch, BadVariablesSayWhich) {
  const auto message = [](std::map<std::string, std::string> env) {
    const base::Result<LaunchRank> r = RankFromEnvironment(Env(std::move(env)));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "RANK is set (torchrun) but LOCAL_RANK is not");
  EXPECT_EQ(message({{"RANK", "x"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "RANK='x' (torchrun) is not a non-negative integer");
  EXPECT_EQ(message({{"RANK", "-1"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "RANK='-1' (torchrun) is not a non-negative integer");
  EXPECT_EQ(message({{"RANK", "2"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "2"}}),
            "RANK=2 is not below WORLD_SIZE=2 (torchrun)");
  EXPECT_EQ(message({{"PMI_RANK", "0"}, {"MPI_LOCALRANKID", "0"}, {"PMI_SIZE", "0"}}),
            "PMI_RANK=0 is not below PMI_SIZE=0 (MPICH)");
}

class ChooseStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lp_launch_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "deploy.json")
        << R"({"deployment": "pp2", "device_memory": "h200", "stages": [)"
           R"({"manifest": "a.json"}, {"manifest": "b.json", "device_memory": "288GB"}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string File() const { return (dir_ / "deploy.json").string(); }
  fs::path dir_;
};

TEST_F(ChooseStageTest, RankPicksTheStageAndLocalRankTheGpu) {
  const base::Result<StageChoice> c =
      ChooseStage(File(), {.rank = 1, .local_rank = 3, .world_size = 2, .launcher = "torchrun"});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->deployment, "pp2");
  EXPECT_EQ(c->stage, 1u);
  EXPECT_EQ(c->stages, 2u);
  EXPECT_EQ(fs::path(c->manifest), dir_ / "b.json");
  EXPECT_EQ(c->device, 3);
  EXPECT_EQ(c->device_memory, "288GB");
  const base::Result<StageChoice> first =
      ChooseStage(File(), {.rank = 0, .local_rank = 0, .world_size = 2, .launcher = "torchrun"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->device_memory, "h200");  // the deployment's default
}

TEST_F(ChooseStageTest, AWorldSizeOtherThanTheStagesIsRefused) {
  const base::Result<StageChoice> alone = ChooseStage(File(), {});
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().message(),
            File() +
                ": deployment pp2 has 2 stages, but 1 process was started (no launcher: 1): "
                "start one process per stage (torchrun --nproc-per-node 2, or mpirun -np 2)");
  const base::Result<StageChoice> three =
      ChooseStage(File(), {.rank = 0, .world_size = 3, .launcher = "Open MPI"});
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("3 processes were started (Open MPI's world size)"),
            std::string::npos)
      << three.status().message();
}

TEST_F(ChooseStageTest, ABrokenFileSaysWhere) {
  std::ofstream(dir_ / "deploy.json") << R"({"stages": [{"manifest": 3}]})";
  const base::Result<StageChoice> c = ChooseStage(File(), {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("X1 /stages/0/manifest"), std::string::npos)
      << c.status().message();
  EXPECT_FALSE(ChooseStage((dir_ / "missing.json").string(), {}).ok());
}

}  // namespace
}  // namespace loadplan::api
