// Test model folders: a config.json and safetensors shards of zero bytes, written to a fresh
// temporary directory (removed with the object).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend/checkpoint/safetensors_write.h"
#include "importer/import.h"
#include "verifier/manifest.h"

namespace loadplan::importer::testing {

using Tensors = std::vector<backend::TensorSpec>;

class ModelFolder {
 public:
  ModelFolder() {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("loadplan-import-{}-{}", ::getpid(), counter_++);
    std::filesystem::create_directories(dir_);
  }
  ~ModelFolder() { std::filesystem::remove_all(dir_); }
  ModelFolder(const ModelFolder&) = delete;
  ModelFolder& operator=(const ModelFolder&) = delete;

  [[nodiscard]] std::string dir() const { return dir_.string(); }
  [[nodiscard]] std::string path(const std::string& file) const { return (dir_ / file).string(); }

  void Config(const nlohmann::json& config) const { Write("config.json", config.dump(2)); }
  void Write(const std::string& file, const std::string& text) const {
    std::ofstream(dir_ / file, std::ios::binary) << text;
  }
  // One file, model.safetensors.
  void Single(const Tensors& t) const { Shard("model.safetensors", t); }
  // Shards of `per_shard` tensors each with an HF index (model-0000K-of-0000N.safetensors).
  void Sharded(const Tensors& t, size_t per_shard) const {
    const size_t n = (t.size() + per_shard - 1) / per_shard;
    nlohmann::json map = nlohmann::json::object();
    for (size_t s = 0; s < n; ++s) {
      const std::string file = fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, n);
      Tensors part(t.begin() + static_cast<long>(s * per_shard),
                   t.begin() + static_cast<long>(std::min(t.size(), (s + 1) * per_shard)));
      for (const auto& x : part) map[x.name] = file;
      Shard(file, part);
    }
    Write("model.safetensors.index.json",
          nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump(2));
  }
  void Shard(const std::string& file, const Tensors& t) const {
    const base::Status st = backend::WriteSafetensors(
        path(file), t, {{"format", "pt"}}, [](size_t, uint64_t, std::span<uint8_t> out) {
          std::fill(out.begin(), out.end(), uint8_t{0});
        });
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // One file, model.safetensors, every byte a function of its tensor and offset (Pattern), so
  // a byte read from the wrong place shows.
  void SingleFilled(const Tensors& t) const {
    const base::Status st =
        backend::WriteSafetensors(path("model.safetensors"), t, {{"format", "pt"}},
                                  [](size_t tensor, uint64_t offset, std::span<uint8_t> out) {
                                    for (size_t i = 0; i < out.size(); ++i)
                                      out[i] = Pattern(tensor, offset + i);
                                  });
    ASSERT_TRUE(st.ok()) << st.message();
  }
  static uint8_t Pattern(size_t tensor, uint64_t offset) {
    return static_cast<uint8_t>(((tensor + 1) * 2654435761u + offset * 40503u) >> 7);
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
};

// The buffer `name` of m, or nullptr.
inline const verifier::Buffer* Find(const verifier::Manifest& m, std::string_view name) {
  for (const verifier::Buffer& b : m.buffers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

// "batch,min(ctx, 128),2,8,64"
inline std::string ShapeOf(const verifier::Buffer& b) {
  std::string s;
  for (const verifier::Expr& d : b.shape) s += (s.empty() ? "" : ",") + verifier::ToString(d);
  return s;
}

// A Llama-family config and its tensors: H hidden, I intermediate, L layers, V vocab,
// 4 heads of 16, 2 KV heads.
inline nlohmann::json LlamaConfig(int64_t layers = 2) {
  return {{"model_type", "llama"},
          {"architectures", {"LlamaForCausalLM"}},
          {"hidden_size", 64},
          {"intermediate_size", 128},
          {"num_hidden_layers", layers},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"vocab_size", 100},
          {"max_position_embeddings", 4096},
          {"tie_word_embeddings", false},
          {"torch_dtype", "bfloat16"}};
}

inline Tensors LlamaTensors(int64_t layers = 2, bool lm_head = true) {
  using base::Dtype;
  Tensors t = {{"model.embed_tokens.weight", Dtype::kBF16, {100, 64}},
               {"model.norm.weight", Dtype::kBF16, {64}}};
  if (lm_head) t.push_back({"lm_head.weight", Dtype::kBF16, {100, 64}});
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    for (auto [n, s] : std::vector<std::pair<const char*, std::vector<uint64_t>>>{
             {"input_layernorm.weight", {64}},
             {"post_attention_layernorm.weight", {64}},
             {"self_attn.q_proj.weight", {64, 64}},
             {"self_attn.k_proj.weight", {32, 64}},
             {"self_attn.v_proj.weight", {32, 64}},
             {"self_attn.o_proj.weight", {64, 64}},
             {"mlp.gate_proj.weight", {128, 64}},
             {"mlp.up_proj.weight", {128, 64}},
             {"mlp.down_proj.weight", {64, 128}}}) {
      t.push_back({p + n, Dtype::kBF16, s});
    }
  }
  return t;
}

// The folder imported (ImportModel with `o`).
inline base::Result<ImportResult> Import(const ModelFolder& f, ImportOptions o = {}) {
  return ImportModel(f.dir(), o);
}

// A folder of `config` and one model.safetensors of `t`, imported: the arrange-and-act of
// most importer tests in one line.
inline base::Result<ImportResult> ImportOf(const nlohmann::json& config, const Tensors& t,
                                           ImportOptions o = {}) {
  ModelFolder f;
  f.Config(config);
  f.Single(t);
  return Import(f, o);
}

}  // namespace loadplan::importer::testing
