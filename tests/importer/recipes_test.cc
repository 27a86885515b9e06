// The import recipes on small gpt-oss (MXFP4) and DeepSeek-V3-style (FP8, MLA) folders.
#include "importer/import.h"

#include <gtest/gtest.h>

#include "tests/importer/model_folder.h"
#include "verifier/verify.h"

namespace loadplan::importer {
namespace {

using base::Dtype;
using testing::Find;
using testing::ModelFolder;
using testing::ShapeOf;
using testing::Tensors;

// gpt-oss: 2 layers (sliding, full), 4 experts, H = I = 128, 4 heads of 32, 2 KV heads.
nlohmann::json GptOssConfig() {
  return {{"model_type", "gpt_oss"},
          {"hidden_size", 128},
          {"intermediate_size", 128},
          {"num_hidden_layers", 2},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"head_dim", 32},
          {"vocab_size", 50},
          {"num_local_experts", 4},
          {"max_position_embeddings", 8192},
          {"sliding_window", 128},
          {"layer_types", {"sliding_attention", "full_attention"}},
          {"quantization_config", {{"quant_method", "mxfp4"}}}};
}

Tensors GptOssTensors() {
  Tensors t = {{"model.embed_tokens.weight", Dtype::kBF16, {50, 128}},
               {"model.norm.weight", Dtype::kBF16, {128}},
               {"lm_head.weight", Dtype::kBF16, {50, 128}}};
  for (int l = 0; l < 2; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    for (auto [n, d, s] : std::vector<std::tuple<const char*, Dtype, std::vector<uint64_t>>>{
             {"input_layernorm.weight", Dtype::kBF16, {128}},
             {"post_attention_layernorm.weight", Dtype::kBF16, {128}},
             {"self_attn.q_proj.weight", Dtype::kBF16, {128, 128}},
             {"self_attn.q_proj.bias", Dtype::kBF16, {128}},
             {"self_attn.k_proj.weight", Dtype::kBF16, {64, 128}},
             {"self_attn.k_proj.bias", Dtype::kBF16, {64}},
             {"self_attn.v_proj.weight", Dtype::kBF16, {64, 128}},
             {"self_attn.v_proj.bias", Dtype::kBF16, {64}},
             {"self_attn.o_proj.weight", Dtype::kBF16, {128, 128}},
             {"self_attn.o_proj.bias", Dtype::kBF16, {128}},
             {"self_attn.sinks", Dtype::kBF16, {4}},
             {"mlp.router.weight", Dtype::kBF16, {4, 128}},
             {"mlp.router.bias", Dtype::kBF16, {4}},
             {"mlp.experts.gate_up_proj_blocks", Dtype::kU8, {4, 256, 4, 16}},
             {"mlp.experts.gate_up_proj_scales", Dtype::kU8, {4, 256, 4}},
             {"mlp.experts.gate_up_proj_bias", Dtype::kBF16, {4, 256}},
             {"mlp.experts.down_proj_blocks", Dtype::kU8, {4, 128, 4, 16}},
             {"mlp.experts.down_proj_scales", Dtype::kU8, {4, 128, 4}},
             {"mlp.experts.down_proj_bias", Dtype::kBF16, {4, 128}}}) {
      t.push_back({p + n, d, s});
    }
  }
  return t;
}

void ExpectClean(const ImportResult& r) {
  const verifier::VerifyResult v = verifier::Verify(r.manifest);
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(v.diags.empty()) << v.diags.front().code << " " << v.diags.front().message;
}

TEST(ImportRecipes, GptOssAutoIsTheExpertPrepWithExportedCarries) {
  ModelFolder f;
  f.Config(GptOssConfig());
  f.Single(GptOssTensors());
  const auto r = ImportModel(f.dir());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->recipe, Recipe::kMxfp4GptOss);
  EXPECT_EQ(r->sources, 12u);
  EXPECT_EQ(r->carries, 12u);
  ExpectClean(*r);
  const verifier::Buffer* w = Find(r->manifest, "model.layers.1.mlp.experts.fc1_w");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->exported);
  EXPECT_EQ(ShapeOf(*w), "4,256,64");  // 2*i_pad rows of k_pad/2 bytes
  const verifier::Buffer* raw = Find(r->manifest, "model.layers.1.mlp.experts.fc1_w.raw");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->kind, verifier::BufferKind::kSource);
  EXPECT_EQ(raw->tensor, "model.layers.1.mlp.experts.gate_up_proj_blocks");
  // Sliding layer 0 holds at most 128 positions; layer 1 the whole context.
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.0")), "batch,min(ctx, 128),2,2,32");
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.1")), "batch,ctx,2,2,32");
  EXPECT_EQ(r->kv_bytes_per_token, 2 * 2 * 32 * 2);  // only the full layer grows
}

TEST(ImportRecipes, NoneBindsTheMxfp4TensorsAsStored) {
  ModelFolder f;
  f.Config(GptOssConfig());
  f.Single(GptOssTensors());
  const auto r = ImportModel(f.dir(), {.recipe = Recipe::kNone});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->sources, 0u);
  EXPECT_EQ(r->weights, GptOssTensors().size());
  ExpectClean(*r);
}

TEST(ImportRecipes, Mxfp4Bf16MakesTransformersShapedCarries) {
  ModelFolder f;
  f.Config(GptOssConfig());
  f.Single(GptOssTensors());
  const auto r = ImportModel(f.dir(), {.recipe = Recipe::kMxfp4Bf16});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectClean(*r);
  EXPECT_EQ(r->carries, 4u);
  const verifier::Buffer* gu = Find(r->manifest, "model.layers.0.mlp.experts.gate_up_proj");
  ASSERT_NE(gu, nullptr);
  EXPECT_EQ(gu->dtype, Dtype::kBF16);
  EXPECT_EQ(ShapeOf(*gu), "4,128,256");  // [E, H, 2I] as GptOssExperts.gate_up_proj
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "model.layers.0.mlp.experts.down_proj")), "4,128,128");
  // Biases are used as stored.
  EXPECT_EQ(Find(r->manifest, "model.layers.0.mlp.experts.gate_up_proj_bias")->kind,
            verifier::BufferKind::kWeight);
}

// DeepSeek-V3 style: MLA, 1 dense + 1 MoE layer + 1 MTP layer, FP8 experts with 128 blocks.
nlohmann::json DeepSeekConfig() {
  return {{"model_type", "deepseek_v3"},
          {"hidden_size", 256},
          {"intermediate_size", 128},
          {"moe_intermediate_size", 64},
          {"num_hidden_layers", 2},
          {"num_nextn_predict_layers", 1},
          {"first_k_dense_replace", 1},
          {"n_routed_experts", 4},
          {"n_shared_experts", 1},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 2},
          {"q_lora_rank", 64},
          {"kv_lora_rank", 32},
          {"qk_rope_head_dim", 16},
          {"qk_nope_head_dim", 32},
          {"v_head_dim", 32},
          {"vocab_size", 50},
          {"max_position_embeddings", 16384},
          {"quantization_config",
           {{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}}}};
}

Tensors DeepSeekTensors() {
  Tensors t = {{"model.embed_tokens.weight", Dtype::kBF16, {50, 256}},
               {"model.norm.weight", Dtype::kBF16, {256}},
               {"lm_head.weight", Dtype::kBF16, {50, 256}}};
  const auto fp8 = [&](const std::string& n, uint64_t rows, uint64_t cols) {
    t.push_back({n + ".weight", Dtype::kF8E4M3, {rows, cols}});
    t.push_back({n + ".weight_scale_inv", Dtype::kF32, {(rows + 127) / 128, (cols + 127) / 128}});
  };
  for (int l = 0; l < 3; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    t.push_back({p + "input_layernorm.weight", Dtype::kBF16, {256}});
    t.push_back({p + "post_attention_layernorm.weight", Dtype::kBF16, {256}});
    fp8(p + "self_attn.q_a_proj", 64, 256);
    t.push_back({p + "self_attn.q_a_layernorm.weight", Dtype::kBF16, {64}});
    fp8(p + "self_attn.q_b_proj", 2 * 48, 64);
    fp8(p + "self_attn.kv_a_proj_with_mqa", 48, 256);
    t.push_back({p + "self_attn.kv_a_layernorm.weight", Dtype::kBF16, {32}});
    fp8(p + "self_attn.kv_b_proj", 2 * 64, 32);
    fp8(p + "self_attn.o_proj", 256, 64);
    if (l == 0) {
      fp8(p + "mlp.gate_proj", 128, 256);
      fp8(p + "mlp.up_proj", 128, 256);
      fp8(p + "mlp.down_proj", 256, 128);
      continue;
    }
    t.push_back({p + "mlp.gate.weight", Dtype::kBF16, {4, 256}});
    t.push_back({p + "mlp.gate.e_score_correction_bias", Dtype::kF32, {4}});
    for (int e = 0; e < 4; ++e) {
      const std::string x = fmt::format("{}mlp.experts.{}.", p, e);
      fp8(x + "gate_proj", 64, 256);
      fp8(x + "up_proj", 64, 256);
      fp8(x + "down_proj", 256, 64);
    }
    fp8(p + "mlp.shared_experts.gate_proj", 64, 256);
    fp8(p + "mlp.shared_experts.up_proj", 64, 256);
    fp8(p + "mlp.shared_experts.down_proj", 256, 64);
    if (l == 2) {  // MTP
      t.push_back({p + "enorm.weight", Dtype::kBF16, {256}});
      t.push_back({p + "hnorm.weight", Dtype::kBF16, {256}});
      t.push_back({p + "eh_proj.weight", Dtype::kBF16, {256, 512}});
      t.push_back({p + "shared_head.norm.weight", Dtype::kBF16, {256}});
      t.push_back({p + "shared_head.head.weight", Dtype::kBF16, {50, 256}});
      t.push_back({p + "embed_tokens.weight", Dtype::kBF16, {50, 256}});
    }
  }
  return t;
}

TEST(ImportRecipes, DeepSeekFp8KeepBindsWeightsAndScalesWithAnMlaCache) {
  ModelFolder f;
  f.Config(DeepSeekConfig());
  f.Sharded(DeepSeekTensors(), 40);
  const auto r = ImportModel(f.dir());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->recipe, Recipe::kFp8Keep);
  EXPECT_EQ(r->sources, 0u);
  EXPECT_EQ(r->weights, DeepSeekTensors().size());
  ExpectClean(*r);
  EXPECT_EQ(r->kv_layers, 2u);  // no cache for the MTP layer
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.1")), "batch,ctx,48");  // kv_lora + rope
}

TEST(ImportRecipes, DeepSeekFp8Bf16DequantizesEveryBlockScaledWeight) {
  ModelFolder f;
  f.Config(DeepSeekConfig());
  f.Sharded(DeepSeekTensors(), 40);
  const auto r = ImportModel(f.dir(), {.recipe = Recipe::kFp8Bf16});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectClean(*r);
  const verifier::Buffer* w = Find(r->manifest, "model.layers.1.mlp.experts.3.down_proj.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, verifier::BufferKind::kCarry);
  EXPECT_EQ(w->dtype, Dtype::kBF16);
  EXPECT_EQ(ShapeOf(*w), "256,64");
  const verifier::Buffer* src =
      Find(r->manifest, "model.layers.1.mlp.experts.3.down_proj.weight.fp8");
  ASSERT_NE(src, nullptr);
  EXPECT_EQ(src->kind, verifier::BufferKind::kSource);
  EXPECT_EQ(src->tensor, "model.layers.1.mlp.experts.3.down_proj.weight");
}

TEST(ImportRecipes, ScaleOfTheWrongBlockShapeIsAnError) {
  ModelFolder f;
  nlohmann::json c = DeepSeekConfig();
  c["quantization_config"]["weight_block_size"] = {64, 64};
  f.Config(c);
  f.Single(DeepSeekTensors());
  const auto loose = ImportModel(f.dir());  // the recipe refuses the scales all the same
  ASSERT_FALSE(loose.ok());
  EXPECT_NE(loose.status().message().find("weight_block_size [64, 64]"), std::string::npos)
      << loose.status().message();
  const auto r = ImportModel(f.dir(), {.strict = true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("weight_scale_inv (in model.safetensors) has shape [1, 2]; "
                                      "config.json implies [1, 4]"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace loadplan::importer
