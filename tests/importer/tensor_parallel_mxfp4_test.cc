// import --tensor-parallel with gpt-oss's recipe (mxfp4-gpt-oss): each rank reads the slice of
// its intermediate and prepares it itself. What a rank derives must be what the recipe derives
// from a checkpoint that holds only that slice: the test writes that checkpoint (its own byte
// slicing of the whole tensors), imports it whole, loads both with the host backend (the CPU
// reference kernels) and compares every carry byte for byte.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors_write.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "importer/import.h"
#include "importer/tensor_parallel.h"
#include "tests/importer/model_folder.h"
#include "tests/verified_plan.h"

namespace loadplan::importer {
namespace {

using testing::ModelFolder;
using testing::Tensors;

constexpr int64_t kExperts = 2, kHidden = 64;
const std::string kP = "model.layers.0.mlp.experts.";

nlohmann::json Config(int64_t intermediate) {
  nlohmann::json c = testing::LlamaConfig(1);
  c["model_type"] = "gpt_oss";
  c["num_local_experts"] = kExperts;
  c["intermediate_size"] = intermediate;
  return c;
}

// gpt-oss's six expert tensors for intermediate I (blocks of 32).
Tensors Experts(uint64_t i) {
  const uint64_t e = kExperts, h = kHidden;
  return {{kP + "down_proj_bias", base::Dtype::kBF16, {e, h}},
          {kP + "down_proj_blocks", base::Dtype::kU8, {e, h, i / 32, 16}},
          {kP + "down_proj_scales", base::Dtype::kU8, {e, h, i / 32}},
          {kP + "gate_up_proj_bias", base::Dtype::kBF16, {e, 2 * i}},
          {kP + "gate_up_proj_blocks", base::Dtype::kU8, {e, 2 * i, h / 32, 16}},
          {kP + "gate_up_proj_scales", base::Dtype::kU8, {e, 2 * i, h / 32}}};
}

// Where the rank's intermediate [first, first + count) lies in each tensor: fc1 by interleaved
// rows (dim 1, 2 an index), fc2 by blocks (dim 2, 1 per 32 indices); the down bias whole.
struct Cut {
  size_t dim = 0;
  uint64_t start = 0, length = 0;
  bool whole = true;
};
Cut CutOf(const backend::TensorSpec& t, uint64_t first, uint64_t count) {
  if (t.name.find("gate_up") != std::string::npos) return {1, 2 * first, 2 * count, false};
  if (t.name.ends_with("down_proj_blocks") || t.name.ends_with("down_proj_scales"))
    return {2, first / 32, count / 32, false};
  return {};
}

// The sliced checkpoint: byte k of a sliced tensor is the whole tensor's byte at the same place
// (the pattern the whole folder was written with, ModelFolder::Pattern of its index there).
void WriteSliced(const ModelFolder& f, const Tensors& whole, uint64_t first, uint64_t count) {
  Tensors sliced = whole;
  std::vector<Cut> cuts;
  for (backend::TensorSpec& t : sliced) {
    cuts.push_back(CutOf(t, first, count));
    if (!cuts.back().whole) t.shape[cuts.back().dim] = cuts.back().length;
  }
  const auto fill = [&](size_t k, uint64_t offset, std::span<uint8_t> out) {
    const backend::TensorSpec& w = whole[k];
    const Cut& c = cuts[k];
    uint64_t inner = base::DtypeBits(w.dtype) / 8;
    for (size_t d = c.dim + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
    for (size_t j = 0; j < out.size(); ++j) {
      const uint64_t at = offset + j;
      uint64_t src = at;
      if (!c.whole) {
        const uint64_t row = c.length * inner, outer = at / row, rest = at % row;
        src = outer * w.shape[c.dim] * inner + c.start * inner + rest;
      }
      out[j] = ModelFolder::Pattern(k, src);
    }
  };
  const base::Status st =
      backend::WriteSafetensors(f.path("model.safetensors"), sliced, {{"format", "pt"}}, fill);
  ASSERT_TRUE(st.ok()) << st.message();
}

// The carries (every buffer without a tensor) of `m` loaded by the host backend from `dir`.
std::map<std::string, std::vector<uint8_t>> Carries(const verifier::Manifest& m,
                                                    const std::string& dir) {
  std::map<std::string, std::vector<uint8_t>> out;
  auto checkpoint = backend::Checkpoint::Open(dir);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  if (!checkpoint.ok()) return out;
  const simulator::LoadPlan plan = test_support::PlanOf(m);
  backend::HostBackend host(plan, **checkpoint);
  const backend::ExecuteResult run = backend::Execute(plan, host);
  EXPECT_TRUE(run.status.ok()) << run.status.message();
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (b.kind != verifier::BufferKind::kCarry) continue;
    const auto bytes = host.Bytes(b.id);
    out[b.name].assign(bytes.begin(), bytes.end());
  }
  return out;
}

// 160 intermediate indices (5 blocks) over 2 ranks as vLLM deals them: 96 and 64. Each rank's
// six prepared tensors equal the recipe's on a checkpoint of its slice alone; the down bias is
// read whole by both ranks (listed as replicated).
TEST(TensorParallelMxfp4, EachRankPreparesItsSliceAsTheRecipeDoesAWholeTensor) {
  ModelFolder f;
  f.Config(Config(160));
  const Tensors whole = Experts(160);
  f.SingleFilled(whole);
  const base::Result<ImportResult> full = ImportModel(f.dir(), {.recipe = Recipe::kMxfp4GptOss});
  ASSERT_TRUE(full.ok()) << full.status().message();
  ASSERT_FALSE(full->manifest.programs.empty());
  const base::Result<HfConfig> config = ReadHfConfig(f.path("config.json"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  const uint64_t first[2] = {0, 96}, count[2] = {96, 64};
  for (int64_t r = 0; r < 2; ++r) {
    SCOPED_TRACE(r);
    const base::Result<TensorParallelRank> rank =
        SplitTensorParallel(full->manifest, *config, 2, r);
    ASSERT_TRUE(rank.ok()) << rank.status().message();
    EXPECT_EQ(rank->replicated, std::vector<std::string>{kP + "fc2_b.raw"});  // the down bias
    // kRankLanes lanes and 2 calls ahead where the recipe has 1; on any lane count the rank
    // stages its sources in the same arena (their windows count derive calls, not lanes).
    EXPECT_EQ(rank->manifest.load.lanes, kRankLanes);
    EXPECT_EQ(rank->manifest.load.prefetch, 2 * full->manifest.load.prefetch);
    EXPECT_EQ(full->manifest.load.prefetch, 1u);
    const simulator::LoadPlan own = test_support::PlanOf(rank->manifest);
    EXPECT_GT(own.arena_bytes, 0u);
    for (const uint32_t lanes : {1u, 4u}) {  // fewer than the rank's own
      const simulator::LoadPlan other = test_support::PlanOf(rank->manifest, {.lanes = lanes});
      EXPECT_EQ(other.lanes, lanes);
      EXPECT_EQ(other.arena_bytes_rounded, own.arena_bytes_rounded);
      EXPECT_EQ(other.resident_bytes, own.resident_bytes);
    }
    const auto got = Carries(rank->manifest, f.dir());
    ModelFolder alone;
    alone.Config(Config(static_cast<int64_t>(count[r])));
    WriteSliced(alone, whole, first[r], count[r]);
    const base::Result<ImportResult> want_import =
        ImportModel(alone.dir(), {.recipe = Recipe::kMxfp4GptOss});
    ASSERT_TRUE(want_import.ok()) << want_import.status().message();
    const auto want = Carries(want_import->manifest, alone.dir());
    ASSERT_EQ(got.size(), 6u);
    for (const auto& [name, bytes] : want) {
      ASSERT_TRUE(got.contains(name)) << name;
      EXPECT_EQ(got.at(name).size(), bytes.size()) << name;
      EXPECT_TRUE(got.at(name) == bytes) << name << " differs from the recipe on the slice";
    }
  }
}

// Why rank 0 of a TP=2 (x `ep`) split of a one-layer gpt-oss imported with `recipe` is refused;
// "" when it is not.
std::string RefusalOf(Recipe recipe, int64_t ep) {
  ModelFolder f;
  f.Config(Config(128));
  f.SingleFilled(Experts(128));
  const base::Result<ImportResult> full = ImportModel(f.dir(), {.recipe = recipe});
  const base::Result<HfConfig> config = ReadHfConfig(f.path("config.json"));
  EXPECT_TRUE(full.ok() && config.ok());
  if (!full.ok() || !config.ok()) return "the import failed";
  const base::Result<TensorParallelRank> rank =
      SplitTensorParallel(full->manifest, *config, 2, 0, ep);
  return rank.ok() ? "" : rank.status().message();
}

// A derive program the split does not know (the MXFP4 experts dequantized to BF16) is refused
// with its call and kernel named, not split wrong.
TEST(TensorParallelMxfp4, OtherDeriveProgramsAreRefused) {
  const std::string why = RefusalOf(Recipe::kMxfp4Bf16, 1);
  EXPECT_NE(why.find("calls mxfp4_experts_bf16, sized for whole tensors"), std::string::npos)
      << why;
}

// Expert parallel deals per-expert tensors; gpt-oss's experts are fused, so there is nothing
// to deal: refused (ranks that would read the same bytes), not split into copies.
TEST(TensorParallelMxfp4, ExpertParallelOfFusedExpertsIsRefused) {
  const std::string why = RefusalOf(Recipe::kMxfp4GptOss, 2);
  EXPECT_NE(why.find("no per-expert tensors"), std::string::npos) << why;
}

}  // namespace
}  // namespace loadplan::importer
