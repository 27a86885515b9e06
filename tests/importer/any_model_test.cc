// Import of any Hugging Face folder: families import does not know by name, folders without a
// config or with an incomplete one, every cache kind from the config (sliding, chunked,
// hybrid state, shared), DeepSeek's MTP layers absent, gpt-oss in BF16.
#include <gtest/gtest.h>

#include "importer/import.h"
#include "tests/importer/model_folder.h"
#include "verifier/verify.h"

namespace loadplan::importer {
namespace {

using base::Dtype;
using testing::Find;
using testing::LlamaConfig;
using testing::LlamaTensors;
using testing::ModelFolder;
using testing::ShapeOf;
using testing::Tensors;

using testing::Import;
using testing::ImportOf;

bool Has(const std::vector<std::string>& v, std::string_view part) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

std::string ErrorText(const base::Result<ImportResult>& r) {
  return r.ok() ? std::string("(imported)") : r.status().message();
}

void ExpectClean(const ImportResult& r) {
  const verifier::VerifyResult v = verifier::Verify(r.manifest);
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(v.diags.empty()) << v.diags.front().message;
}

TEST(AnyModel, UnknownModelTypeImportsEveryTensorWithANote) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c["model_type"] = "olmo2";
  f.Config(c);
  Tensors t = LlamaTensors();
  t.push_back({"model.layers.0.self_attn.q_norm.weight", Dtype::kBF16, {64}});
  f.Single(t);
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->weights, t.size());
  EXPECT_TRUE(Has(r->notes, "model_type \"olmo2\" is not one of the 9 families")) << r->notes[0];
  EXPECT_FALSE(Has(r->notes, "the config does not describe"));  // no "unrecognised" list
  EXPECT_TRUE(r->warnings.empty());
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.0")), "batch,ctx,2,2,16");
  ExpectClean(*r);
}

TEST(AnyModel, UnknownFamilyModelLevelShapesAreStillChecked) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c["model_type"] = "granite";
  c["vocab_size"] = 128;  // the embedding has 100 rows
  f.Config(c);
  f.Single(LlamaTensors());
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->warnings,
                  "model.embed_tokens.weight (in model.safetensors) has shape "
                  "[100, 64]; config.json implies [128, 64]"));
  EXPECT_FALSE(Import(f, {.strict = true}).ok());
}

TEST(AnyModel, NoConfigImportsTheTensorsAndKvBytesPerTokenSizesTheCache) {
  ModelFolder f;
  f.Single(LlamaTensors());
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->weights, LlamaTensors().size());
  EXPECT_EQ(r->kv_layers, 0u);
  EXPECT_TRUE(Has(r->notes, "config.json is absent"));
  EXPECT_TRUE(Has(r->notes, "no cache is planned"));
  EXPECT_EQ(r->manifest.vars[1].max, 4096);  // ctx's assumed bound
  ExpectClean(*r);
  const auto sized = Import(f, {.kv_bytes_per_token = 1024});
  ASSERT_TRUE(sized.ok()) << sized.status().message();
  EXPECT_EQ(ShapeOf(*Find(sized->manifest, "kv_cache")), "batch,ctx,1024");
  EXPECT_EQ(sized->kv_bytes_per_token, 1024);
  EXPECT_FALSE(Import(f, {.kv_bytes_per_token = 0}).ok());
}

TEST(AnyModel, IncompleteConfigIsANoteNotAnError) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c.erase("num_attention_heads");
  f.Config(c);
  f.Single(LlamaTensors());
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->notes, "has no num_attention_heads"));
  EXPECT_EQ(r->kv_layers, 0u);
}

TEST(AnyModel, TextConfigHoldsTheArchitecture) {
  ModelFolder f;
  nlohmann::json text = LlamaConfig();
  text.erase("model_type");
  f.Config({{"model_type", "llama"}, {"text_config", text}});
  f.Single(LlamaTensors());
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->notes, "read from text_config"));
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
  EXPECT_EQ(r->kv_layers, 2u);
}

// Gemma-style: layer_types alternates sliding and full layers.
TEST(AnyModelCache, LayerTypesSlideSomeLayers) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(3);
  c["model_type"] = "gemma3_text";
  c["sliding_window"] = 512;
  c["layer_types"] = {"sliding_attention", "sliding_attention", "full_attention"};
  f.Config(c);
  f.Single(LlamaTensors(3));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.0")), "batch,min(ctx, 512),2,2,16");
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.2")), "batch,ctx,2,2,16");
  EXPECT_EQ(r->kv_bytes_per_token, 2 * 2 * 16 * 2);  // only the full layer grows
}

TEST(AnyModelCache, ChunkedAttentionHoldsOneChunk) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(2);
  c["model_type"] = "llama4_text";
  c["attention_chunk_size"] = 8192;
  c["layer_types"] = {"chunked_attention", "full_attention"};
  f.Config(c);
  f.Single(LlamaTensors(2));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.0")), "batch,min(ctx, 8192),2,2,16");
}

// Qwen3-Next: Gated DeltaNet layers keep a conv window and a recurrent state, no KV cache.
TEST(AnyModelCache, LinearAttentionLayersKeepAStateIndependentOfCtx) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(2);
  c["model_type"] = "qwen3_next";
  c["layer_types"] = {"linear_attention", "full_attention"};
  c["linear_num_key_heads"] = 2;
  c["linear_key_head_dim"] = 16;
  c["linear_num_value_heads"] = 4;
  c["linear_value_head_dim"] = 8;
  c["linear_conv_kernel_dim"] = 4;
  f.Config(c);
  f.Single(LlamaTensors(2));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Find(r->manifest, "kv_cache.0"), nullptr);
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "conv_state.0")), "batch,96,4");  // 2*2*16 + 4*8
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "ssm_state.0")), "batch,4,16,8");
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.1")), "batch,ctx,2,2,16");
  EXPECT_EQ(r->state_layers, 1u);
  EXPECT_EQ(r->state_bytes_per_sequence, 96 * 4 * 2 + 4 * 16 * 8 * 4);  // the state in F32
  ExpectClean(*r);
}

// Falcon-H1: every layer has attention and a Mamba-2 mixer side by side.
TEST(AnyModelCache, HybridLayersKeepKvAndState) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(2);
  c["model_type"] = "falcon_h1";
  c["mamba_d_state"] = 16;
  c["mamba_n_heads"] = 4;
  c["mamba_d_head"] = 16;
  c["mamba_d_conv"] = 4;
  c["mamba_n_groups"] = 1;
  c["mamba_d_ssm"] = 64;
  f.Config(c);
  f.Single(LlamaTensors(2));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.1")), "batch,ctx,2,2,16");
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "conv_state.1")), "batch,96,4");  // 64 + 2*1*16
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "ssm_state.1")), "batch,4,16,16");
}

TEST(AnyModelCache, HybridPatternAndSharedLayers) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(3);
  c["model_type"] = "nemotron_h";
  c["hybrid_override_pattern"] = "M-*";
  c["mamba_num_heads"] = 4;
  c["mamba_head_dim"] = 16;
  c["ssm_state_size"] = 8;
  c["conv_kernel"] = 4;
  c["n_groups"] = 2;
  c["expand"] = 1;
  f.Config(c);
  f.Single(LlamaTensors(3));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(Find(r->manifest, "conv_state.0"), nullptr);
  EXPECT_EQ(Find(r->manifest, "kv_cache.1"), nullptr);  // an MLP block keeps nothing
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.2")), "batch,ctx,2,2,16");

  ModelFolder g;
  nlohmann::json s = LlamaConfig(3);
  s["model_type"] = "gemma3n_text";
  s["num_kv_shared_layers"] = 1;
  g.Config(s);
  g.Single(LlamaTensors(3));
  const auto shared = Import(g);
  ASSERT_TRUE(shared.ok()) << shared.status().message();
  EXPECT_EQ(shared->kv_layers, 2u);
  EXPECT_EQ(Find(shared->manifest, "kv_cache.2"), nullptr);
}

TEST(AnyModelCache, UnknownLayerKindIsANoteAndNoCache) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(2);
  c["model_type"] = "somehybrid";
  c["layer_types"] = {"retention", "full_attention"};
  f.Config(c);
  f.Single(LlamaTensors(2));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->notes, "layer_types[0] is \"retention\""));
  EXPECT_TRUE(Has(r->notes, "no cache is planned"));
  EXPECT_EQ(r->kv_layers, 0u);
}

}  // namespace
}  // namespace loadplan::importer

// ---- what a review tried (each a clear answer, never a crash) ----
namespace loadplan::importer {
namespace {

TEST(AnyModelReview, AZeroAttentionPeriodIsAnErrorNotADivisionByZero) {
  nlohmann::json c = LlamaConfig(2);
  c["model_type"] = "jamba";
  c["attn_layer_period"] = 0;
  c["mamba_d_state"] = 4;
  const auto r = ImportOf(c, LlamaTensors(2));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("attn_layer_period is 0"), std::string::npos);
}

TEST(AnyModelReview, ANegativeLayerIsNotALayer) {
  Tensors t = LlamaTensors();
  t.push_back({"model.layers.-1.input_layernorm.weight", Dtype::kBF16, {64}});
  const auto r = ImportOf(LlamaConfig(), t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->notes, "model.layers.-1.input_layernorm.weight"));  // unrecognised
}

TEST(AnyModelReview, MillionsOfMissingTensorsAreCountedNotListed) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(4096);
  c["model_type"] = "qwen3_moe";
  c["num_experts"] = 65535;
  c["moe_intermediate_size"] = 4;
  f.Config(c);
  f.Single(LlamaTensors(1));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->warnings.size(), 1001u);
  EXPECT_NE(r->warnings.back().find("... and at least 1000000 more problems not listed"),
            std::string::npos)
      << r->warnings.back();
  const auto strict = Import(f, {.strict = true});
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("(at least 1001000 problems)"), std::string::npos);
}

TEST(AnyModelReview, GemmaPatternsWithoutLayerTypesSlideAsTransformersDoes) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(4);
  c["model_type"] = "gemma2";
  c["sliding_window"] = 4096;
  f.Config(c);
  f.Single(LlamaTensors(4));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.0")), "batch,min(ctx, 4096),2,2,16");
  EXPECT_EQ(ShapeOf(*Find(r->manifest, "kv_cache.1")), "batch,ctx,2,2,16");
  ModelFolder g;
  c["model_type"] = "gemma3_text";
  c["sliding_window_pattern"] = 4;
  g.Config(c);
  g.Single(LlamaTensors(4));
  const auto r3 = Import(g);
  ASSERT_TRUE(r3.ok()) << r3.status().message();
  EXPECT_EQ(ShapeOf(*Find(r3->manifest, "kv_cache.1")), "batch,min(ctx, 4096),2,2,16");
  EXPECT_EQ(ShapeOf(*Find(r3->manifest, "kv_cache.3")), "batch,ctx,2,2,16");
}

TEST(AnyModelReview, AZeroHeadDimAndEveryLayerSharedAreSaid) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig(2);
  c["hidden_size"] = 2;
  f.Config(c);
  f.Single(LlamaTensors(2));
  EXPECT_NE(ErrorText(Import(f)).find("head_dim is missing and hidden_size / "
                                      "num_attention_heads is 0"),
            std::string::npos);
  ModelFolder g;
  nlohmann::json s = LlamaConfig(2);
  s["model_type"] = "gemma3n_text";
  s["num_kv_shared_layers"] = 5;
  g.Config(s);
  g.Single(LlamaTensors(2));
  const auto r = Import(g);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Has(r->notes, "no layer keeps a cache of its own"));
}

}  // namespace
}  // namespace loadplan::importer
