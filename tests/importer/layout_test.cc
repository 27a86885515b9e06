// `import --layout transformers`: per-expert MoE tensors stacked into transformers' fused
// parameters by the read itself (a buffer binding its tensors in order), renames, sibling
// concatenation; the bytes a host-backend load gives equal the tensors one after another.
#include <gtest/gtest.h>

#include "backend/checkpoint/checkpoint.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "importer/import.h"
#include "importer/layouts.h"
#include "tests/importer/model_folder.h"
#include "tests/verified_plan.h"

namespace loadplan::importer {
namespace {

using base::Dtype;
using testing::Find;
using testing::LlamaConfig;
using testing::ModelFolder;
using testing::ShapeOf;
using testing::Tensors;

constexpr int64_t kExperts = 4, kHidden = 64, kInter = 16;

// A 2-layer MoE folder: experts under `experts` with projections `gate`, `up`, `down` (e.g.
// "mlp.experts", "gate_proj", ...), router `router`.
Tensors MoeTensors(const std::string& experts, const std::array<std::string, 3>& proj,
                   const std::string& router) {
  Tensors t = {{"model.embed_tokens.weight", Dtype::kBF16, {100, 64}},
               {"model.norm.weight", Dtype::kBF16, {64}},
               {"lm_head.weight", Dtype::kBF16, {100, 64}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    for (auto [n, s] : std::vector<std::pair<std::string, std::vector<uint64_t>>>{
             {"input_layernorm.weight", {64}},
             {"post_attention_layernorm.weight", {64}},
             {"self_attn.q_proj.weight", {64, 64}},
             {"self_attn.k_proj.weight", {32, 64}},
             {"self_attn.v_proj.weight", {32, 64}},
             {"self_attn.o_proj.weight", {64, 64}},
             {"self_attn.q_norm.weight", {16}},
             {"self_attn.k_norm.weight", {16}},
             {router, {kExperts, 64}}}) {
      t.push_back({p + n, Dtype::kBF16, s});
    }
    for (int e = 0; e < kExperts; ++e) {
      const std::string x = fmt::format("{}{}.{}.", p, experts, e);
      t.push_back({x + proj[0] + ".weight", Dtype::kBF16, {kInter, kHidden}});
      t.push_back({x + proj[1] + ".weight", Dtype::kBF16, {kInter, kHidden}});
      t.push_back({x + proj[2] + ".weight", Dtype::kBF16, {kHidden, kInter}});
    }
  }
  return t;
}

nlohmann::json MoeConfig(const std::string& type) {
  nlohmann::json c = LlamaConfig();
  c["model_type"] = type;
  c["num_experts"] = kExperts;
  c["moe_intermediate_size"] = kInter;
  c["intermediate_size"] = kInter;
  return c;
}

const verifier::Buffer& Must(const ImportResult& r, const std::string& name) {
  const verifier::Buffer* b = Find(r.manifest, name);
  if (b == nullptr) throw std::runtime_error(name + " is not in the manifest");
  return *b;
}

TEST(Layout, Qwen3MoeExpertsAreStackedGateThenUpPerExpert) {
  ModelFolder f;
  f.Config(MoeConfig("qwen3_moe"));
  f.Single(MoeTensors("mlp.experts", {"gate_proj", "up_proj", "down_proj"}, "mlp.gate.weight"));
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const verifier::Buffer& gate_up = Must(*r, "model.layers.1.mlp.experts.gate_up_proj");
  EXPECT_EQ(gate_up.kind, verifier::BufferKind::kWeight);
  EXPECT_EQ(ShapeOf(gate_up), "4,32,64");  // [E, 2I, H]
  ASSERT_TRUE(gate_up.tensors.has_value());
  ASSERT_EQ(gate_up.tensors->size(), 2u * kExperts);
  EXPECT_EQ((*gate_up.tensors)[0], "model.layers.1.mlp.experts.0.gate_proj.weight");
  EXPECT_EQ((*gate_up.tensors)[1], "model.layers.1.mlp.experts.0.up_proj.weight");
  EXPECT_EQ((*gate_up.tensors)[7], "model.layers.1.mlp.experts.3.up_proj.weight");
  const verifier::Buffer& down = Must(*r, "model.layers.1.mlp.experts.down_proj");
  EXPECT_EQ(ShapeOf(down), "4,64,16");  // [E, H, I]
  EXPECT_EQ(Find(r->manifest, "model.layers.0.mlp.experts.0.gate_proj.weight"), nullptr);
  EXPECT_EQ(r->stacks, 4u);
  EXPECT_EQ(r->weights, 3u + 2 * 9 + 4);
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
}

TEST(Layout, MixtralRenamesBlockSparseMoeToMlp) {
  ModelFolder f;
  f.Config(MoeConfig("mixtral"));
  f.Single(
      MoeTensors("block_sparse_moe.experts", {"w1", "w3", "w2"}, "block_sparse_moe.gate.weight"));
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(Must(*r, "model.layers.0.mlp.experts.gate_up_proj")), "4,32,64");
  EXPECT_EQ(Must(*r, "model.layers.0.mlp.experts.gate_up_proj").tensors.value().at(1),
            "model.layers.0.block_sparse_moe.experts.0.w3.weight");
  EXPECT_EQ(ShapeOf(Must(*r, "model.layers.0.mlp.experts.down_proj")), "4,64,16");
  EXPECT_EQ(Must(*r, "model.layers.0.mlp.gate.weight").tensor,
            "model.layers.0.block_sparse_moe.gate.weight");
  // The checkpoint layout keeps the names as stored.
  const auto stored = ImportModel(f.dir());
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  EXPECT_NE(Find(stored->manifest, "model.layers.0.block_sparse_moe.experts.3.w2.weight"), nullptr);
  EXPECT_EQ(stored->stacks, 0u);
}

TEST(Layout, AnExpertMissingLeavesItsLayerAsStoredWithANote) {
  ModelFolder f;
  f.Config(MoeConfig("qwen3_moe"));
  Tensors t = MoeTensors("mlp.experts", {"gate_proj", "up_proj", "down_proj"}, "mlp.gate.weight");
  std::erase_if(t, [](const backend::TensorSpec& s) {
    return s.name == "model.layers.0.mlp.experts.2.up_proj.weight";
  });
  f.Single(t);
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Find(r->manifest, "model.layers.0.mlp.experts.gate_up_proj"), nullptr);
  EXPECT_NE(Find(r->manifest, "model.layers.0.mlp.experts.2.gate_proj.weight"), nullptr);
  EXPECT_NE(Find(r->manifest, "model.layers.1.mlp.experts.gate_up_proj"), nullptr);
  bool noted = false;
  for (const std::string& n : r->notes)
    noted = noted || n.find(
                         "model.layers.0.mlp.experts.gate_up_proj is not stacked (index 2 "
                         "has no mlp.experts.*.up_proj.weight)") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Layout, ExpertsOfOtherShapesOrLeadingZerosAreNotStacked) {
  ModelFolder f;
  f.Config(MoeConfig("qwen3_moe"));
  Tensors t = MoeTensors("mlp.experts", {"gate_proj", "up_proj", "down_proj"}, "mlp.gate.weight");
  for (backend::TensorSpec& s : t) {  // expert 1: gate 24 rows, up 8: the same sum, not a stack
    if (s.name == "model.layers.0.mlp.experts.1.gate_proj.weight") s.shape = {24, kHidden};
    if (s.name == "model.layers.0.mlp.experts.1.up_proj.weight") s.shape = {8, kHidden};
  }
  t.push_back({"model.layers.1.mlp.experts.01.gate_proj.weight", Dtype::kBF16, {kInter, kHidden}});
  f.Single(t);
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Find(r->manifest, "model.layers.0.mlp.experts.gate_up_proj"), nullptr);
  EXPECT_NE(Find(r->manifest, "model.layers.0.mlp.experts.1.gate_proj.weight"), nullptr);
  EXPECT_EQ(Must(*r, "model.layers.1.mlp.experts.gate_up_proj").tensors->size(), 8u);
  EXPECT_NE(Find(r->manifest, "model.layers.1.mlp.experts.01.gate_proj.weight"), nullptr);
}

TEST(Layout, TwoTensorsThatBecomeOneNameAreTheFoldersError) {
  ModelFolder f;
  f.Config(MoeConfig("mixtral"));
  Tensors t =
      MoeTensors("block_sparse_moe.experts", {"w1", "w3", "w2"}, "block_sparse_moe.gate.weight");
  t.push_back({"model.layers.0.mlp.gate.weight", Dtype::kBF16, {kExperts, 64}});
  f.Single(t);
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_NE(r.status().message().find("both become buffer model.layers.0.mlp.gate.weight"),
            std::string::npos)
      << r.status().message();
}

TEST(Layout, SiblingsConcatenateAndAnchoredRenames) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(1);
  c["model_type"] = "olmo_hybrid";
  f.Config(c);
  f.Single({{"model.layers.0.linear_attn.q_conv1d.weight", Dtype::kBF16, {32, 1, 4}},
            {"model.layers.0.linear_attn.k_conv1d.weight", Dtype::kBF16, {32, 1, 4}},
            {"model.layers.0.linear_attn.v_conv1d.weight", Dtype::kBF16, {64, 1, 4}},
            {"model.layers.0.attention_layer_norm.weight", Dtype::kBF16, {64}}});
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(Must(*r, "model.layers.0.linear_attn.conv1d.weight")), "128,1,4");
  EXPECT_NE(Find(r->manifest, "model.layers.0.input_layernorm.weight"), nullptr);
  const LayoutConversion* neox = ConversionOf("gpt_neox");
  ASSERT_NE(neox, nullptr);
  EXPECT_EQ(TransformersName(*neox, "embed_out.weight"), "lm_head.weight");
  EXPECT_EQ(TransformersName(*neox, "gpt_neox.embed_out.weight"), "gpt_neox.embed_out.weight");
}

TEST(Layout, RenamesAnchoredAtTheEndAndChainedInOrder) {  // hy_v4's, transformers 5.17
  const LayoutConversion* hy = ConversionOf("hy_v4");
  ASSERT_NE(hy, nullptr);
  EXPECT_EQ(TransformersName(*hy, "model.layers.0.self_attn.learnable_sink_param"),
            "model.layers.0.self_attn.sinks");
  EXPECT_EQ(TransformersName(*hy, "model.layers.0.self_attn.learnable_sink_param.x"),
            "model.layers.0.self_attn.learnable_sink_param.x");
  EXPECT_EQ(TransformersName(*hy, "model.hc_pre.hc_head.hc_head_base"), "model.hc_head.hc_base");
  EXPECT_EQ(TransformersName(*hy, "model.layers.1.hc_pre.hc_mlp_layer.hc_fn"),
            "model.layers.1.ffn_hc.fn");
}

TEST(Layout, AFamilyWithoutAConversionKeepsItsNamesWithANote) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.Single(testing::LlamaTensors());
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(Find(r->manifest, "model.layers.1.mlp.up_proj.weight"), nullptr);
  EXPECT_EQ(r->layout, Layout::kTransformers);
}

// The host backend's load: every stacked buffer's bytes are its tensors' bytes one after
// another, as numpy's stack/concatenate of the per-expert arrays.
TEST(Layout, TheHostBackendReadsAStackAsItsTensorsInOrder) {
  ModelFolder f;
  f.Config(MoeConfig("qwen3_moe"));
  const Tensors t =
      MoeTensors("mlp.experts", {"gate_proj", "up_proj", "down_proj"}, "mlp.gate.weight");
  f.SingleFilled(t);
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const simulator::LoadPlan plan = test_support::PlanOf(r->manifest);
  auto checkpoint = backend::Checkpoint::Open(f.dir());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  backend::HostBackend host(plan, **checkpoint);
  ASSERT_TRUE(backend::Execute(plan, host).status.ok());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < t.size(); ++i) index[t[i].name] = i;
  size_t checked = 0;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    const verifier::Buffer& m = Must(*r, b.name);
    std::vector<std::string> parts = m.tensors.value_or(std::vector<std::string>{});
    if (m.tensor) parts = {*m.tensor};
    if (parts.empty()) continue;
    std::vector<uint8_t> want;
    for (const std::string& p : parts) {
      const backend::TensorSpec& s = t[index.at(p)];
      uint64_t bytes = 2;
      for (uint64_t d : s.shape) bytes *= d;
      for (uint64_t o = 0; o < bytes; ++o) want.push_back(ModelFolder::Pattern(index.at(p), o));
    }
    const auto got = host.Bytes(b.id);
    ASSERT_EQ(got.size(), want.size()) << b.name;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << b.name;
    ++checked;
  }
  EXPECT_EQ(checked, 3u + 2 * 9 + 4);
}

// hrm_text (transformers 5.17: Chunk(dim=0)): the fused gqkv_proj [4H, H] and gate_up_proj
// [2I, H] become one buffer per part, each a dim-0 slice of the fused tensor (schema 2) whose
// host-backend bytes are the fused tensor's rows; `.attn.o_proj.` renamed; a fused tensor
// whose rows do not divide is left as stored with a note.
TEST(Layout, HrmTextSplitsItsFusedProjectionsIntoSlices) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(1);
  c["model_type"] = "hrm_text";
  f.Config(c);
  const Tensors t = {{"model.layers.0.attn.gqkv_proj.weight", Dtype::kBF16, {256, 64}},
                     {"model.layers.0.attn.o_proj.weight", Dtype::kBF16, {64, 64}},
                     {"model.layers.0.mlp.gate_up_proj.weight", Dtype::kBF16, {32, 64}},
                     {"model.layers.1.mlp.gate_up_proj.weight", Dtype::kBF16, {33, 64}}};
  f.SingleFilled(t);
  const auto r = ImportModel(f.dir(), {.layout = Layout::kTransformers});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->manifest.schema, 2);
  const std::vector<std::pair<std::string, uint64_t>> parts = {
      {"model.layers.0.self_attn.gate_proj.weight", 0},
      {"model.layers.0.self_attn.q_proj.weight", 64},
      {"model.layers.0.self_attn.k_proj.weight", 128},
      {"model.layers.0.self_attn.v_proj.weight", 192}};
  for (const auto& [name, start] : parts) {
    const verifier::Buffer& b = Must(*r, name);
    EXPECT_EQ(b.tensor, "model.layers.0.attn.gqkv_proj.weight");
    EXPECT_EQ(b.slice,
              (verifier::TensorSlice{.dim = 0, .start = start, .length = 64, .extent = 256}))
        << name;
    EXPECT_EQ(ShapeOf(b), "64,64");
  }
  EXPECT_EQ(Must(*r, "model.layers.0.mlp.up_proj.weight").slice,
            (verifier::TensorSlice{.dim = 0, .start = 16, .length = 16, .extent = 32}));
  EXPECT_NE(Find(r->manifest, "model.layers.0.self_attn.o_proj.weight"), nullptr);
  EXPECT_NE(Find(r->manifest, "model.layers.1.mlp.gate_up_proj.weight"), nullptr);  // 33 rows
  const simulator::LoadPlan plan = test_support::PlanOf(r->manifest);
  auto checkpoint = backend::Checkpoint::Open(f.dir());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().message();
  backend::HostBackend host(plan, **checkpoint);
  ASSERT_TRUE(backend::Execute(plan, host).status.ok());
  for (const auto& [name, start] : parts) {  // rows [start, start + 64) of tensor 0, 128 B each
    const auto it = std::find_if(plan.buffers.begin(), plan.buffers.end(),
                                 [&](const simulator::PlannedBuffer& b) { return b.name == name; });
    ASSERT_NE(it, plan.buffers.end()) << name;
    const auto got = host.Bytes(it->id);
    ASSERT_EQ(got.size(), 64u * 128u) << name;
    bool equal = true;
    for (uint64_t o = 0; o < got.size(); ++o)
      equal = equal && got[o] == ModelFolder::Pattern(0, start * 128 + o);
    EXPECT_TRUE(equal) << name;
  }
}

}  // namespace
}  // namespace loadplan::importer
