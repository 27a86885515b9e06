// import --tensor-parallel: each rank's manifest binds the part of every split tensor it reads
// (a slice), verifies, and the host backend loads it; put back, the ranks' parts reproduce
// every tensor, each byte read once (K and V: once per rank that serves the head when
// kv_heads < T); replicated tensors are listed; the KV cache holds the rank's heads.
#include "importer/tensor_parallel.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "importer/import.h"
#include "simulator/deploy/deployment.h"
#include "tests/importer/model_folder.h"
#include "tests/verified_plan.h"
#include "verifier/expr.h"

namespace loadplan::importer {
namespace {

using testing::LlamaConfig;
using testing::LlamaTensors;
using testing::ModelFolder;

// The folder's import with recipe none, its config and its opened checkpoint (what a split
// needs and what its ranks are loaded from); fails the test when any is missing.
struct Imported {
  std::optional<ImportResult> full;
  std::optional<HfConfig> config;
  std::unique_ptr<backend::Checkpoint> checkpoint;
  [[nodiscard]] bool ok() const { return full && config && checkpoint; }
};
Imported ImportFolder(const ModelFolder& f) {
  Imported out;
  base::Result<ImportResult> full = ImportModel(f.dir(), {.recipe = Recipe::kNone});
  base::Result<HfConfig> config = ReadHfConfig(f.dir() + "/config.json");
  auto checkpoint = backend::Checkpoint::Open(f.dir());
  EXPECT_TRUE(full.ok()) << full.status().message();
  EXPECT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  if (full.ok()) out.full = std::move(*full);
  if (config.ok()) out.config = std::move(*config);
  if (checkpoint.ok()) out.checkpoint = std::move(*checkpoint);
  return out;
}

TEST(TensorParallel, RanksPutBackReproduceEveryTensorOnce) {
  ModelFolder f;
  f.Config(LlamaConfig());
  const testing::Tensors t = LlamaTensors();
  f.SingleFilled(t);
  const Imported in = ImportFolder(f);
  ASSERT_TRUE(in.ok());
  const auto& full = in.full;
  const auto& c = in.config;
  const auto& checkpoint = in.checkpoint;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < t.size(); ++i) index[t[i].name] = i;
  for (const int64_t tp : {2, 4}) {
    SCOPED_TRACE(tp);
    std::map<std::string, std::vector<int>> seen;  // tensor -> reads of each byte
    uint64_t read = 0;
    for (int64_t r = 0; r < tp; ++r) {
      base::Result<TensorParallelRank> rank = SplitTensorParallel(full->manifest, *c, tp, r);
      ASSERT_TRUE(rank.ok()) << rank.status().message();
      EXPECT_EQ(rank->replicated.size(), 1u + 2 * 2);  // model.norm, two norms a layer
      read += rank->bytes_read;
      for (const verifier::Buffer& b : rank->manifest.buffers) {  // [batch, ctx, 2, heads, 16]
        if (!b.name.starts_with("kv_cache.")) continue;
        EXPECT_EQ(verifier::ValueAt(b.shape[3], {}), 1) << b.name;  // 2 KV heads over 2, 4
      }
      const simulator::LoadPlan plan = test_support::PlanOf(rank->manifest);
      backend::HostBackend host(plan, *checkpoint);
      ASSERT_TRUE(backend::Execute(plan, host).status.ok());
      for (const simulator::PlannedBuffer& b : plan.buffers) {
        if (!b.tensor) continue;
        const backend::TensorSpec& s = t[index.at(*b.tensor)];
        const uint64_t rows = s.shape[0], cols = s.shape.size() > 1 ? s.shape[1] : 1;
        auto& count = seen[*b.tensor];
        count.resize(rows * cols * 2, 0);
        const verifier::TensorSlice sl = b.slice.value_or(verifier::TensorSlice{0, 0, rows});
        const uint64_t r0 = sl.dim == 0 ? sl.start : 0, nr = sl.dim == 0 ? sl.length : rows;
        const uint64_t c0 = sl.dim == 1 ? sl.start : 0, nc = sl.dim == 1 ? sl.length : cols;
        const auto got = host.Bytes(b.id);
        ASSERT_EQ(got.size(), nr * nc * 2) << b.name;
        bool equal = true;
        for (uint64_t i = 0; i < nr; ++i) {
          for (uint64_t j = 0; j < nc * 2; ++j) {
            const uint64_t at = ((r0 + i) * cols + c0) * 2 + j;
            equal = equal && got[(i * nc) * 2 + j] == ModelFolder::Pattern(index.at(*b.tensor), at);
            ++count[at];
          }
        }
        EXPECT_TRUE(equal) << b.name << " rank " << r;
      }
    }
    for (const auto& [name, count] : seen) {
      const bool replicated = name.ends_with("norm.weight");
      const bool kv =
          name.find("k_proj") != std::string::npos || name.find("v_proj") != std::string::npos;
      const int want = replicated     ? static_cast<int>(tp)
                       : kv && tp > 2 ? static_cast<int>(tp / 2)
                                      : 1;
      EXPECT_EQ(*std::min_element(count.begin(), count.end()), want) << name;
      EXPECT_EQ(*std::max_element(count.begin(), count.end()), want) << name;
    }
    uint64_t ckpt = 0;
    for (const backend::TensorSpec& s : t)
      ckpt += s.shape[0] * (s.shape.size() > 1 ? s.shape[1] : 1) * 2;
    EXPECT_GT(read, ckpt);  // the replicated norms (and K/V at T=4) read again
    EXPECT_LT(read, ckpt + ckpt / 2);
  }
}

TEST(TensorParallel, RefusalsNameTheTensorOrTheRecipe) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.Single(LlamaTensors());
  const Imported in = ImportFolder(f);
  ASSERT_TRUE(in.ok());
  const auto& full = in.full;
  const auto& c = in.config;
  const auto eight = SplitTensorParallel(full->manifest, *c, 8, 0);  // vocabulary 100
  ASSERT_FALSE(eight.ok());
  EXPECT_NE(eight.status().message().find("lm_head.weight: dimension 0 (100) does not "
                                          "divide by --tensor-parallel 8"),
            std::string::npos)
      << eight.status().message();
  EXPECT_EQ(SplitTensorParallel(full->manifest, *c, 2, 2).status().kind(),
            base::ErrorKind::kOption);
}

// The folder's ranks in canonical text and the deployment file that lists them: ParseDeployment
// reads it as T ranks of one tensor-parallel group; each rank's text reads back to its
// manifest (schema 2).
TEST(TensorParallel, ImportWritesRanksAndADeploymentPlanReads) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.Single(LlamaTensors());
  const base::Result<TensorParallelImport> r =
      ImportTensorParallel(f.dir(), 2, {.recipe = Recipe::kNone});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->texts.size(), 2u);
  EXPECT_NE(r->texts[1].find("\"schema\": 2"), std::string::npos);
  EXPECT_EQ(r->ranks[1].manifest.load.lanes, kRankLanes);  // the model's manifest had one
  EXPECT_EQ(r->ranks[1].manifest.load.prefetch, 0u);       // and derives nothing
  verifier::Manifest own = r->full.manifest;               // more lanes than kRankLanes are kept
  own.load.lanes = kRankLanes + 4;
  const auto kept = SplitTensorParallel(own, *ReadHfConfig(f.dir() + "/config.json"), 2, 0);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->manifest.load.lanes, kRankLanes + 4);
  EXPECT_EQ(RankLoad({.lanes = 4, .prefetch = 1}, 8, true).prefetch, 8u);
  EXPECT_EQ(RankLoad({.lanes = 4, .prefetch = 1}, 8, false).prefetch, 1u);
  EXPECT_EQ(RankLoad({.lanes = 4, .prefetch = 1}, 8, true).lanes, kRankLanes);
  EXPECT_EQ(RankLoad({.lanes = 1, .prefetch = 1u << 30}, 8, true).prefetch, uint32_t{INT32_MAX});
  const simulator::DeploymentParse d =
      simulator::ParseDeployment(r->deployment, f.dir() + "/deploy.json");
  ASSERT_TRUE(d.deployment) << (d.diags.empty() ? "" : d.diags[0].message);
  EXPECT_EQ(d.deployment->tensor_parallel, 2);
  EXPECT_EQ(d.deployment->stages[1].manifest, "rank-1.json");
  const auto bad = simulator::ParseDeployment(
      R"({"deployment": "x", "tensor_parallel": 4, "stages": [{"manifest": "a.json"}]})", "d.json");
  ASSERT_EQ(bad.diags.size(), 1u);
  EXPECT_EQ(bad.diags[0].pointer, "/tensor_parallel");
  EXPECT_FALSE(ImportTensorParallel(f.dir(), 0, {}).ok());
}

// Expert parallel: 4 experts over tp 2 x ep 2 = 4 ranks, one expert each, whole; attention
// split as tensor-parallel rank r % 2 (so read by both expert groups); the router replicated.
TEST(TensorParallel, ExpertParallelDealsWholeExpertsOverAllRanks) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(1);
  c["model_type"] = "qwen3_moe";
  c["num_experts"] = 4;
  f.Config(c);
  testing::Tensors t = {{"model.embed_tokens.weight", base::Dtype::kBF16, {100, 64}},
                        {"model.layers.0.self_attn.q_proj.weight", base::Dtype::kBF16, {64, 64}},
                        {"model.layers.0.mlp.gate.weight", base::Dtype::kBF16, {4, 64}}};
  for (int e = 0; e < 4; ++e) {
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      t.push_back({fmt::format("model.layers.0.mlp.experts.{}.{}.weight", e, p),
                   base::Dtype::kBF16,
                   {16, 64}});
    }
  }
  f.Single(t);
  const base::Result<TensorParallelImport> r =
      ImportTensorParallel(f.dir(), 2, {.recipe = Recipe::kNone}, 2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->ranks.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    const TensorParallelRank& rank = r->ranks[k];
    EXPECT_EQ(rank.experts, std::vector<int64_t>{static_cast<int64_t>(k)});
    const verifier::Manifest& m = rank.manifest;
    const auto has = [&](const std::string& n) { return testing::Find(m, n) != nullptr; };
    EXPECT_TRUE(has(fmt::format("model.layers.0.mlp.experts.{}.up_proj.weight", k)));
    EXPECT_FALSE(has(fmt::format("model.layers.0.mlp.experts.{}.up_proj.weight", (k + 1) % 4)));
    const verifier::Buffer* q = testing::Find(m, "model.layers.0.self_attn.q_proj.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->slice,
              (verifier::TensorSlice{.dim = 0, .start = 32 * (k % 2), .length = 32, .extent = 64}));
    EXPECT_FALSE(testing::Find(m, "model.layers.0.mlp.gate.weight")->slice.has_value());
  }
  const auto four = ImportTensorParallel(f.dir(), 3, {.recipe = Recipe::kNone}, 2);
  ASSERT_FALSE(four.ok());  // 64 rows by 3, or 4 experts over 6 ranks
}

// --layout transformers renames tensors to the engine's names: the split follows the buffer's
// name (hrm_text's checkpoint `attn.o_proj` is the engine's `self_attn.o_proj`, split by
// columns), not the checkpoint's.
TEST(TensorParallel, RenamedLayoutsSplitByTheEnginesNames) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(1);
  c["model_type"] = "hrm_text";
  f.Config(c);
  f.SingleFilled({{"model.layers.0.attn.gqkv_proj.weight", base::Dtype::kBF16, {256, 64}},
                  {"model.layers.0.attn.o_proj.weight", base::Dtype::kBF16, {64, 64}}});
  const base::Result<ImportResult> full =
      ImportModel(f.dir(), {.recipe = Recipe::kNone, .layout = Layout::kTransformers});
  ASSERT_TRUE(full.ok()) << full.status().message();
  const base::Result<HfConfig> config = ReadHfConfig(f.dir() + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const auto rank = SplitTensorParallel(full->manifest, *config, 2, 1);
  ASSERT_TRUE(rank.ok()) << rank.status().message();
  const verifier::Buffer* o =
      testing::Find(rank->manifest, "model.layers.0.self_attn.o_proj.weight");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->slice, (verifier::TensorSlice{.dim = 1, .start = 32, .length = 32, .extent = 64}));
}

// A one-layer gpt_oss config with 2 experts and this intermediate size (Llama's attention).
nlohmann::json GptOssConfig(int64_t intermediate) {
  nlohmann::json c = LlamaConfig(1);
  c["model_type"] = "gpt_oss";
  c["num_local_experts"] = 2;
  c["intermediate_size"] = intermediate;
  return c;
}

// gpt-oss's checkpoint layout (recipe none): the fused MXFP4 experts split by intermediate (the
// interleaved gate/up rows on dim 1, the down blocks on dim 2), the sinks by head, the down
// bias and router whole; every rank verifies and the host backend loads it; an intermediate
// whose blocks do not divide is refused naming the tensor.
TEST(TensorParallel, GptOssFusedExpertsSplitByIntermediate) {
  ModelFolder f;
  f.Config(GptOssConfig(128));
  const std::string p = "model.layers.0.";
  const testing::Tensors t = {
      {p + "self_attn.sinks", base::Dtype::kBF16, {4}},
      {p + "mlp.router.weight", base::Dtype::kBF16, {2, 64}},
      {p + "mlp.experts.gate_up_proj_blocks", base::Dtype::kU8, {2, 256, 2, 16}},
      {p + "mlp.experts.gate_up_proj_scales", base::Dtype::kU8, {2, 256, 2}},
      {p + "mlp.experts.gate_up_proj_bias", base::Dtype::kBF16, {2, 256}},
      {p + "mlp.experts.down_proj_blocks", base::Dtype::kU8, {2, 64, 4, 16}},
      {p + "mlp.experts.down_proj_scales", base::Dtype::kU8, {2, 64, 4}},
      {p + "mlp.experts.down_proj_bias", base::Dtype::kBF16, {2, 64}}};
  f.SingleFilled(t);
  const Imported in = ImportFolder(f);
  ASSERT_TRUE(in.ok());
  const auto& full = in.full;
  const auto& config = in.config;
  const auto& checkpoint = in.checkpoint;
  for (int64_t r = 0; r < 2; ++r) {
    const auto rank = SplitTensorParallel(full->manifest, *config, 2, r);
    ASSERT_TRUE(rank.ok()) << rank.status().message();
    const verifier::Manifest& m = rank->manifest;
    const auto slice = [&](const std::string& n) { return testing::Find(m, p + n)->slice; };
    const uint64_t u = static_cast<uint64_t>(r);
    EXPECT_EQ(slice("mlp.experts.gate_up_proj_blocks"),
              (verifier::TensorSlice{.dim = 1, .start = 128 * u, .length = 128, .extent = 256}));
    EXPECT_EQ(slice("mlp.experts.gate_up_proj_bias"),
              (verifier::TensorSlice{.dim = 1, .start = 128 * u, .length = 128, .extent = 256}));
    EXPECT_EQ(slice("mlp.experts.down_proj_blocks"),
              (verifier::TensorSlice{.dim = 2, .start = 2 * u, .length = 2, .extent = 4}));
    EXPECT_EQ(slice("self_attn.sinks"),
              (verifier::TensorSlice{.dim = 0, .start = 2 * u, .length = 2, .extent = 4}));
    EXPECT_FALSE(slice("mlp.experts.down_proj_bias").has_value());
    const simulator::LoadPlan plan = test_support::PlanOf(m);
    backend::HostBackend host(plan, *checkpoint);
    EXPECT_TRUE(backend::Execute(plan, host).status.ok());
  }
  // 4 blocks over 8 ranks, as vLLM deals them (1 a rank): ranks 4-7 get none, refused.
  const auto none = SplitTensorParallel(full->manifest, *config, 8, 4);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("4 intermediate blocks leave rank 4 of "
                                         "--tensor-parallel 8 none"),
            std::string::npos)
      << none.status().message();
}

// An intermediate of 5 MXFP4 blocks over 2 ranks, as vLLM deals it: ceil(5/2) = 3 blocks to
// rank 0, the other 2 to rank 1 (gpt-oss-120b's 90 over 8: 7 x 12 + 6); every rank loads.
TEST(TensorParallel, GptOssUnevenIntermediateGoesAsVllmDealsIt) {
  ModelFolder f;
  f.Config(GptOssConfig(160));
  const std::string p = "model.layers.0.";
  f.SingleFilled({{p + "mlp.experts.gate_up_proj_blocks", base::Dtype::kU8, {2, 320, 2, 16}},
                  {p + "mlp.experts.gate_up_proj_bias", base::Dtype::kBF16, {2, 320}},
                  {p + "mlp.experts.down_proj_blocks", base::Dtype::kU8, {2, 64, 5, 16}},
                  {p + "mlp.experts.down_proj_scales", base::Dtype::kU8, {2, 64, 5}}});
  const Imported in = ImportFolder(f);
  ASSERT_TRUE(in.ok());
  const uint64_t rows[2][2] = {{0, 192}, {192, 128}}, blocks[2][2] = {{0, 3}, {3, 2}};
  for (int64_t r = 0; r < 2; ++r) {
    const auto rank = SplitTensorParallel(in.full->manifest, *in.config, 2, r);
    ASSERT_TRUE(rank.ok()) << rank.status().message();
    const auto slice = [&](const std::string& n) {
      return testing::Find(rank->manifest, p + n)->slice;
    };
    EXPECT_EQ(slice("mlp.experts.gate_up_proj_blocks"),
              (verifier::TensorSlice{
                  .dim = 1, .start = rows[r][0], .length = rows[r][1], .extent = 320}));
    EXPECT_EQ(slice("mlp.experts.gate_up_proj_bias"),
              (verifier::TensorSlice{
                  .dim = 1, .start = rows[r][0], .length = rows[r][1], .extent = 320}));
    EXPECT_EQ(slice("mlp.experts.down_proj_scales"),
              (verifier::TensorSlice{
                  .dim = 2, .start = blocks[r][0], .length = blocks[r][1], .extent = 5}));
    const simulator::LoadPlan plan = test_support::PlanOf(rank->manifest);
    backend::HostBackend host(plan, *in.checkpoint);
    EXPECT_TRUE(backend::Execute(plan, host).status.ok());
  }
}

// --pipeline 2 --tensor-parallel 2: 4 rank manifests in rank order (stage p's rank t is
// rank 2p + t), each verifying and loading with the host backend; the deployment file parses
// with "tensor_parallel": 2 over 4 stages; the ranks of one stage bind that stage's tensors.
TEST(TensorParallel, PipelineStagesOfTensorParallelRanks) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.SingleFilled(LlamaTensors());
  const base::Result<TensorParallelImport> grid =
      ImportPipelineTensorParallel(f.dir(), 2, 2, {.recipe = Recipe::kNone});
  ASSERT_TRUE(grid.ok()) << grid.status().message();
  ASSERT_EQ(grid->ranks.size(), 4u);
  EXPECT_EQ(GridFileName(1, 0), "stage-1-rank-0.json");
  const simulator::DeploymentParse d =
      simulator::ParseDeployment(grid->deployment, "x/deploy.json");
  ASSERT_TRUE(d.deployment.has_value()) << (d.diags.empty() ? "" : d.diags.front().message);
  EXPECT_EQ(d.deployment->tensor_parallel, 2);
  ASSERT_EQ(d.deployment->stages.size(), 4u);
  EXPECT_EQ(d.deployment->stages[3].path, "x/stage-1-rank-1.json");
  auto checkpoint = backend::Checkpoint::Open(f.dir());
  ASSERT_TRUE(checkpoint.ok());
  for (size_t k = 0; k < 4; ++k) {
    const verifier::Manifest& m = grid->ranks[k].manifest;
    EXPECT_NE(m.name.find(fmt::format("stage-{}", k / 2)), std::string::npos) << m.name;
    EXPECT_EQ(m.load.lanes, kRankLanes) << m.name;  // a grid's ranks load as any rank
    const simulator::LoadPlan plan = test_support::PlanOf(m);
    backend::HostBackend host(plan, **checkpoint);
    EXPECT_TRUE(backend::Execute(plan, host).status.ok()) << m.name;
  }
  EXPECT_EQ(grid->ranks[0].bytes_read, grid->ranks[1].bytes_read);  // one stage's two halves
  const simulator::DeploymentParse odd = simulator::ParseDeployment(
      R"({"deployment": "d", "tensor_parallel": 2, "stages": [{"manifest": "a.json"},
          {"manifest": "b.json"}, {"manifest": "c.json"}]})",
      "deploy.json");
  ASSERT_FALSE(odd.diags.empty());
  EXPECT_NE(odd.diags.front().message.find("needs whole groups of 2 ranks"), std::string::npos);
}

}  // namespace
}  // namespace loadplan::importer
