// Tests of `loadplan import --pipeline N` (importer/pipeline.h): gpt-oss-120b's skeleton
// (scripts/hf_skeleton.py, 36 layers) split into 2, 4 and 8 stages: every stage verifies, the
// boundaries check clean (simulator/deploy), the layers partition 0..35 in order, the bytes
// balance, the embeddings are on stage 0 only and the head on the last only; N = 1 is the
// unsplit import; N outside 1..36 is refused; through the command, PP4 fits H200s.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cmd_import.h"
#include "cli/cmd_plan.h"
#include "importer/pipeline.h"
#include "simulator/deploy/deployment.h"
#include "tests/importer/model_folder.h"
#include "verifier/verify.h"

namespace loadplan::importer {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kLayers = 36;  // gpt-oss-120b's num_hidden_layers

// The gpt-oss-120b skeleton (headers only, sparse data), written once for the suite.
class ImportPipeline120b : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::path(::testing::TempDir()) / fmt::format("import_pipeline_{}", ::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    const std::string cmd =
        fmt::format("python3 '{}/scripts/hf_skeleton.py' gpt-oss-120b '{}' >/dev/null",
                    LOADPLAN_SOURCE_DIR, (root_ / "gpt-oss-120b").string());
    ok_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }
  void SetUp() override { ASSERT_TRUE(ok_) << "scripts/hf_skeleton.py gpt-oss-120b failed"; }
  static std::string Model() { return (root_ / "gpt-oss-120b").string(); }

  static inline fs::path root_;
  static inline bool ok_ = false;
};

// The layer a buffer name numbers (`model.layers.N.` or `kv_cache.N`), or -1.
int64_t LayerOfName(const std::string& name) {
  for (const std::string prefix : {"model.layers.", "kv_cache."}) {
    if (name.rfind(prefix, 0) == 0) return std::stoll(name.substr(prefix.size()));
  }
  return -1;
}

bool Has(const verifier::Manifest& m, std::string_view name) {
  return m.FindBuffer(name) != nullptr;
}

void ExpectSoundSplit(const PipelineImport& p, int64_t n) {
  ASSERT_EQ(p.stages.size(), static_cast<size_t>(n));
  // Every stage verifies clean, as written (the text parses back to no diagnostic).
  for (const PipelineStage& s : p.stages) {
    const verifier::CheckOutput c = verifier::CheckText(s.text);
    EXPECT_TRUE(c.result.diags.empty()) << s.manifest.name << ": " << c.result.diags.front().code
                                        << " " << c.result.diags.front().message;
  }
  // The boundaries check clean.
  std::vector<simulator::StageView> views;
  for (size_t k = 0; k < p.stages.size(); ++k) {
    views.push_back({.manifest = &p.stages[k].manifest, .label = fmt::format("stage {}", k)});
  }
  const std::vector<verifier::Diagnostic> diags = simulator::CheckBoundaries(views);
  EXPECT_TRUE(diags.empty()) << diags.front().code << " " << diags.front().message;
  // The layers are a partition of 0..35 in order; each stage's buffers are its layers'.
  int64_t next = 0;
  for (const PipelineStage& s : p.stages) {
    EXPECT_EQ(s.layers.begin, next);
    EXPECT_LT(s.layers.begin, s.layers.end);
    next = s.layers.end;
    std::set<int64_t> seen;
    for (const verifier::Buffer& b : s.manifest.buffers) {
      const int64_t l = LayerOfName(b.name);
      if (l < 0) continue;
      EXPECT_GE(l, s.layers.begin) << b.name;
      EXPECT_LT(l, s.layers.end) << b.name;
      seen.insert(l);
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(s.layers.end - s.layers.begin));
  }
  EXPECT_EQ(next, kLayers);
  // Byte balance: within the largest layer plus the embeddings and the head.
  const LayerBytes bytes = CountLayerBytes(p.full.manifest, kLayers);
  const uint64_t largest = *std::max_element(bytes.layers.begin(), bytes.layers.end());
  uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
  for (const PipelineStage& s : p.stages) {
    lo = std::min(lo, s.bytes);
    hi = std::max(hi, s.bytes);
    sum += s.bytes;
  }
  EXPECT_LE(hi - lo, largest + bytes.first + bytes.last) << "PP" << n;
  EXPECT_LE(hi - lo, 2 * largest) << "PP" << n;  // the nearest-cut bound
  uint64_t all = bytes.first + bytes.last;
  for (uint64_t b : bytes.layers) all += b;
  EXPECT_EQ(sum, all);
  // The embeddings on stage 0 only, the head and final norm on the last only.
  for (size_t k = 0; k < p.stages.size(); ++k) {
    const verifier::Manifest& m = p.stages[k].manifest;
    EXPECT_EQ(Has(m, "model.embed_tokens.weight"), k == 0) << k;
    EXPECT_EQ(Has(m, "lm_head.weight"), k + 1 == p.stages.size()) << k;
    EXPECT_EQ(Has(m, "model.norm.weight"), k + 1 == p.stages.size()) << k;
    EXPECT_EQ(Has(m, "hidden_in"), k != 0) << k;
    EXPECT_EQ(Has(m, "hidden_out"), k + 1 != p.stages.size()) << k;
  }
}

TEST_F(ImportPipeline120b, Pp2Pp4Pp8SplitSoundly) {
  for (const int64_t n : {2, 4, 8}) {
    SCOPED_TRACE(fmt::format("--pipeline {}", n));
    const base::Result<PipelineImport> p = ImportPipeline(Model(), n);
    ASSERT_TRUE(p.ok()) << p.status().message();
    ExpectSoundSplit(*p, n);
  }
}

TEST_F(ImportPipeline120b, DeploymentFileNamesTheStagesInOrder) {
  const base::Result<PipelineImport> p = ImportPipeline(Model(), 4);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const simulator::DeploymentParse d = simulator::ParseDeployment(p->deployment, "out/deploy.json");
  ASSERT_TRUE(d.deployment) << p->deployment;
  EXPECT_EQ(d.deployment->name, "gpt-oss-120b-pp4");
  ASSERT_EQ(d.deployment->stages.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(d.deployment->stages[k].manifest, StageFileName(k));
    EXPECT_EQ(p->stages[k].manifest.name, fmt::format("gpt-oss-120b-stage-{}", k));
  }
}

TEST_F(ImportPipeline120b, OneStageIsTheUnsplitImport) {
  const base::Result<PipelineImport> p = ImportPipeline(Model(), 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->stages.size(), 1u);
  EXPECT_EQ(p->stages[0].manifest.buffers, p->full.manifest.buffers);
  EXPECT_EQ(p->stages[0].manifest.programs, p->full.manifest.programs);
  EXPECT_EQ(p->stages[0].layers, (LayerRange{0, kLayers}));
}

TEST_F(ImportPipeline120b, StagesOutsideOneToLayersAreRefused) {
  for (const int64_t n : {int64_t{0}, int64_t{-1}, kLayers + 1}) {
    const base::Result<PipelineImport> p = ImportPipeline(Model(), n);
    ASSERT_FALSE(p.ok()) << n;
    EXPECT_EQ(p.status().kind(), base::ErrorKind::kInvalidInput);
    EXPECT_NE(p.status().message().find(fmt::format("--pipeline {}", n)), std::string::npos)
        << p.status().message();
  }
  const base::Result<PipelineImport> all = ImportPipeline(Model(), kLayers);  // one layer each
  ASSERT_TRUE(all.ok()) << all.status().message();
  ExpectSoundSplit(*all, kLayers);
}

// A tied head (no lm_head.weight) reads the embeddings on the last stage: bound there too.
TEST(ImportPipelineTied, EmbeddingsOnTheFirstAndTheLastStage) {
  testing::ModelFolder f;
  nlohmann::json c = testing::LlamaConfig(4);
  c["tie_word_embeddings"] = true;
  f.Config(c);
  f.Single(testing::LlamaTensors(4, /*lm_head=*/false));
  const base::Result<PipelineImport> p = ImportPipeline(f.dir(), 2);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->stages.size(), 2u);
  for (const PipelineStage& s : p->stages) {
    EXPECT_TRUE(Has(s.manifest, "model.embed_tokens.weight")) << s.manifest.name;
    EXPECT_TRUE(verifier::CheckText(s.text).result.diags.empty()) << s.manifest.name;
  }
  EXPECT_TRUE(Has(p->stages[1].manifest, "model.norm.weight"));
  EXPECT_EQ(p->stages[0].layers, (LayerRange{0, 2}));
  const LayerBytes bytes = CountLayerBytes(p->full.manifest, 4);
  EXPECT_GT(bytes.first, 0u);
  EXPECT_GE(bytes.last, bytes.first);  // the embeddings count on both ends
}

TEST(BalanceLayers, EqualLayersSplitEvenlyAndEveryStageKeepsALayer) {
  const LayerBytes even{.layers = std::vector<uint64_t>(36, 100)};
  const std::vector<LayerRange> r = BalanceLayers(even, 4);
  EXPECT_EQ(r, (std::vector<LayerRange>{{0, 9}, {9, 18}, {18, 27}, {27, 36}}));
  // A huge embedding: stage 0 still gets one layer, the rest share the others.
  const LayerBytes heavy{.layers = std::vector<uint64_t>(4, 1), .first = 1000};
  EXPECT_EQ(BalanceLayers(heavy, 4), (std::vector<LayerRange>{{0, 1}, {1, 2}, {2, 3}, {3, 4}}));
}

// Through the command: -o DIR gets the stages and deploy.json, and `plan DEPLOY.json` fits
// every stage on an H200 at PP4 (batch up to 64, context up to 8192).
TEST_F(ImportPipeline120b, CommandWritesStagesAndPp4FitsH200s) {
  const fs::path out = root_ / "pp4";
  cli::ImportCliOptions o{
      .dir = Model(), .out = out.string(), .max_batch = 64, .max_ctx = 8192, .pipeline = 4};
  ::testing::internal::CaptureStderr();
  const int rc = cli::RunImport(o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, 0) << err;
  for (size_t k = 0; k < 4; ++k) EXPECT_TRUE(fs::exists(out / StageFileName(k))) << k;
  ASSERT_TRUE(fs::exists(out / "deploy.json"));
  cli::PlanCliOptions plan{.file = (out / "deploy.json").string(),
                           .device_memory = "h200",
                           .format = cli::Format::kJson};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int planned = cli::RunPlan(plan);
  const std::string json = ::testing::internal::GetCapturedStdout();
  const std::string plan_err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(planned, 0) << plan_err << json;
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["boundaries"], 3);
  EXPECT_EQ(j["fits"], true);
  ASSERT_EQ(j["stages"].size(), 4u);
  for (const nlohmann::json& s : j["stages"]) EXPECT_EQ(s["fits"], true) << s.dump();
}

// --pipeline 2 --tensor-parallel 2: four rank files (stage-p-rank-t.json), a plan of the grid
// (2 boundaries, one per rank column); a broken boundary of stage 1 rank 1 is an error at the
// deployment's own pointer, /stages/3.
TEST_F(ImportPipeline120b, CommandWritesAGridOfPipelineStagesOfTensorParallelRanks) {
  const fs::path out = root_ / "pp2tp2";
  cli::ImportCliOptions o{.dir = Model(),
                          .out = out.string(),
                          .recipe = "none",
                          .max_batch = 64,
                          .max_ctx = 8192,
                          .pipeline = 2,
                          .tensor_parallel = 2};
  ::testing::internal::CaptureStderr();
  const int rc = cli::RunImport(o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(rc, 0) << err;
  for (const char* f :
       {"stage-0-rank-0.json", "stage-0-rank-1.json", "stage-1-rank-0.json", "stage-1-rank-1.json"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  cli::PlanCliOptions plan{.file = (out / "deploy.json").string(), .format = cli::Format::kJson};
  const auto run = [&plan](std::string& text) {
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = cli::RunPlan(plan);
    text = ::testing::internal::GetCapturedStdout() + ::testing::internal::GetCapturedStderr();
    return code;
  };
  std::string text;
  ASSERT_EQ(run(text), 0) << text;
  const nlohmann::json j = nlohmann::json::parse(text.substr(0, text.rfind('}') + 1));
  EXPECT_EQ(j["boundaries"], 2);
  EXPECT_EQ(j["tensor_parallel"], 2);
  nlohmann::json broken = nlohmann::json::parse(std::ifstream(out / "stage-1-rank-1.json"));
  broken["buffers"]["hidden_in"]["shape"][1] = 7;
  std::ofstream(out / "stage-1-rank-1.json") << broken.dump();
  plan.format = cli::Format::kText;
  EXPECT_EQ(run(text), 1) << text;
  EXPECT_NE(text.find("/stages/3"), std::string::npos) << text;
}

TEST_F(ImportPipeline120b, CommandNeedsAnOutputFolder) {
  cli::ImportCliOptions o{.dir = Model(), .pipeline = 2};
  ::testing::internal::CaptureStderr();
  const int rc = cli::RunImport(o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("-o DIR"), std::string::npos) << err;
}

}  // namespace
}  // namespace loadplan::importer
