// loadplan import: model folders -> manifests that verify clean, and the errors for folders
// that are wrong (each naming the file and tensor).
#include "importer/import.h"

#include <gtest/gtest.h>

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

TEST(Import, LlamaEveryTensorIsAWeightWithItsNameDtypeAndShape) {
  ModelFolder f;
  f.Config(LlamaConfig());
  const Tensors t = LlamaTensors();
  f.Sharded(t, 5);
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensors, t.size());
  EXPECT_EQ(r->shards, 5u);
  EXPECT_EQ(r->weights, t.size());
  EXPECT_EQ(r->sources, 0u);
  EXPECT_EQ(r->recipe, Recipe::kNone);
  for (const backend::TensorSpec& s : t) {
    const verifier::Buffer* b = Find(r->manifest, s.name);
    ASSERT_NE(b, nullptr) << s.name;
    EXPECT_EQ(b->kind, verifier::BufferKind::kWeight);
    EXPECT_EQ(b->tensor, s.name);
    EXPECT_EQ(b->dtype, s.dtype);
    std::string want;
    for (uint64_t d : s.shape) want += (want.empty() ? "" : ",") + std::to_string(d);
    EXPECT_EQ(ShapeOf(*b), want) << s.name;
  }
  const verifier::VerifyResult v = verifier::Verify(r->manifest);
  EXPECT_TRUE(v.ok());
  EXPECT_TRUE(v.diags.empty()) << v.diags.front().message;  // clean: no warning either
}

TEST(Import, KvCacheIsStateOverBatchAndCtxWithTheConfigBounds) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.Single(LlamaTensors());
  const auto r = Import(f, {.max_batch = 8});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const verifier::Buffer* kv = Find(r->manifest, "kv_cache.1");
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->kind, verifier::BufferKind::kState);
  EXPECT_EQ(ShapeOf(*kv), "batch,ctx,2,2,16");  // 2 KV heads of hidden/heads = 16
  EXPECT_EQ(r->kv_layers, 2u);
  EXPECT_EQ(r->kv_bytes_per_token, 2 * 2 * 2 * 16 * 2);
  ASSERT_EQ(r->manifest.vars.size(), 2u);
  EXPECT_EQ(r->manifest.vars[0].name, "batch");
  EXPECT_EQ(r->manifest.vars[0].max, 8);
  EXPECT_EQ(r->manifest.vars[1].max, 4096);  // max_position_embeddings
  EXPECT_EQ(r->manifest.name, std::filesystem::path(f.dir()).filename().string());
}

TEST(Import, TiedEmbeddingsWithoutLmHeadAreNoted) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c["tie_word_embeddings"] = true;
  f.Config(c);
  f.Single(LlamaTensors(2, /*lm_head=*/false));
  const auto r = Import(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes[0].find("tied"), std::string::npos) << r->notes[0];
}

TEST(Import, UnrecognisedTensorsAreStillBoundAndReported) {
  Tensors t = LlamaTensors();
  t.push_back({"model.rotary_emb.inv_freq", Dtype::kF32, {8}});
  const auto r = ImportOf(LlamaConfig(), t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(Find(r->manifest, "model.rotary_emb.inv_freq"), nullptr);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("model.rotary_emb.inv_freq"), std::string::npos);
}

// ---- errors ----

std::string ErrorOf(const base::Result<ImportResult>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.status().message();
}

TEST(ImportErrors, ShapeThatDisagreesWithTheConfigNamesTensorShardAndFields) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c["num_key_value_heads"] = 4;  // the tensors have 2
  f.Config(c);
  f.Sharded(LlamaTensors(), 8);
  const std::string want =
      "model.layers.0.self_attn.k_proj.weight (in model-00001-of-00003.safetensors) has shape "
      "[32, 64]; config.json implies [64, 64] (num_key_value_heads*head_dim, hidden_size)";
  const auto loose = Import(f);  // without --strict: a warning, the tensors bound as stored
  ASSERT_TRUE(loose.ok()) << loose.status().message();
  ASSERT_FALSE(loose->warnings.empty());
  EXPECT_NE(loose->warnings[0].find(want), std::string::npos) << loose->warnings[0];
  EXPECT_EQ(ShapeOf(*Find(loose->manifest, "model.layers.0.self_attn.k_proj.weight")), "32,64");
  const std::string e = ErrorOf(Import(f, {.strict = true}));
  EXPECT_NE(e.find("model.layers.0.self_attn.k_proj.weight (in model-00001-of-00003.safetensors) "
                   "has shape [32, 64]; config.json implies [64, 64] "
                   "(num_key_value_heads*head_dim, hidden_size)"),
            std::string::npos)
      << e;
}

TEST(ImportErrors, MissingLayerAndLayerPastTheConfig) {
  ModelFolder f;
  f.Config(LlamaConfig(3));  // the tensors have 2 layers
  f.Single(LlamaTensors(2));
  const ImportOptions strict{.strict = true};
  EXPECT_NE(ErrorOf(Import(f, strict)).find("model.layers.2.self_attn.q_proj.weight is missing"),
            std::string::npos);
  const auto loose = Import(f);
  ASSERT_TRUE(loose.ok()) << loose.status().message();
  EXPECT_FALSE(loose->warnings.empty());
  ModelFolder g;
  g.Config(LlamaConfig(1));
  g.Single(LlamaTensors(2));
  EXPECT_NE(ErrorOf(Import(g, strict)).find("layer 1 is past num_hidden_layers 1"),
            std::string::npos);
}

TEST(ImportErrors, UnknownModelTypeListsTheKnownOnesUnderStrict) {
  ModelFolder f;
  nlohmann::json c = LlamaConfig();
  c["model_type"] = "olmo2";
  f.Config(c);
  f.Single(LlamaTensors());
  const auto r = Import(f, {.strict = true});
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_NE(ErrorOf(r).find("model_type \"olmo2\" is not one loadplan knows by name (deepseek_v3,"),
            std::string::npos);
}

TEST(ImportErrors, ConfigProblemsNameTheFileAndKey) {
  ModelFolder f;
  const ImportOptions strict{.strict = true};
  EXPECT_EQ(Import(f, strict).status().kind(), base::ErrorKind::kIo);  // no config.json
  EXPECT_NE(ErrorOf(Import(f, strict)).find("config.json: No such file or directory"),
            std::string::npos);
  f.Write("config.json", "{not json");
  EXPECT_NE(ErrorOf(Import(f)).find("config.json: not valid JSON"), std::string::npos);
  nlohmann::json c = LlamaConfig();
  c.erase("hidden_size");
  f.Config(c);
  EXPECT_NE(ErrorOf(Import(f, strict)).find("config.json: hidden_size is missing"),
            std::string::npos);
  c = LlamaConfig();
  c["num_hidden_layers"] = "two";
  f.Config(c);
  EXPECT_NE(ErrorOf(Import(f)).find("num_hidden_layers is \"two\"; expected an integer in"),
            std::string::npos);
  c = LlamaConfig();
  c["num_hidden_layers"] = int64_t{1} << 50;  // no allocation of a 2^50-entry table
  f.Config(c);
  EXPECT_NE(ErrorOf(Import(f)).find("num_hidden_layers is 1125899906842624; expected an integer "
                                    "in [1, 4096]"),
            std::string::npos);
  c = LlamaConfig();
  c["hidden_size"] = int64_t{1} << 40;  // no int64 overflow in the shapes it implies
  f.Config(c);
  EXPECT_NE(ErrorOf(Import(f)).find("hidden_size is 1099511627776"), std::string::npos);
  EXPECT_EQ(ImportModel(f.path("nothing")).status().kind(), base::ErrorKind::kIo);
}

TEST(ImportErrors, BrokenIndexOrShards) {
  ModelFolder f;  // the index names a shard that is not there
  f.Config(LlamaConfig());
  f.Sharded(LlamaTensors(), 8);
  std::filesystem::remove(f.path("model-00002-of-00003.safetensors"));
  EXPECT_NE(ErrorOf(Import(f)).find("model-00002-of-00003.safetensors"), std::string::npos);

  ModelFolder g;  // one tensor in two shards
  g.Config(LlamaConfig());
  Tensors t = LlamaTensors();
  g.Shard("model-00001-of-00002.safetensors", t);
  nlohmann::json map;
  for (const auto& x : t) map[x.name] = "model-00001-of-00002.safetensors";
  map[t[1].name] = "model-00002-of-00002.safetensors";  // so the index opens both shards
  g.Shard("model-00002-of-00002.safetensors", {t[0], t[1]});
  g.Write("model.safetensors.index.json", nlohmann::json{{"weight_map", map}}.dump());
  EXPECT_NE(ErrorOf(Import(g)).find("is stored twice"), std::string::npos);

  ModelFolder h;  // a shard that is not safetensors
  h.Config(LlamaConfig());
  h.Write("model.safetensors", "this is not a safetensors file at all");
  EXPECT_NE(ErrorOf(Import(h)).find("model.safetensors"), std::string::npos);
}

TEST(ImportErrors, NamedRecipeThatDoesNotApply) {
  ModelFolder f;
  f.Config(LlamaConfig());
  f.Single(LlamaTensors());
  EXPECT_NE(ErrorOf(Import(f, {.recipe = Recipe::kFp8Bf16})).find("recipe fp8-bf16: no FP8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Import(f, {.recipe = Recipe::kMxfp4Bf16})).find("recipe mxfp4-bf16: no MXFP4"),
            std::string::npos);
}

}  // namespace
}  // namespace loadplan::importer
