// A Hugging Face model's config.json, read into the fields `loadplan import` uses: the
// architecture (layers, widths, heads), MoE and MLA sizes, sliding windows and the
// quantization_config. Field names and defaults are the transformers configuration classes'.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace loadplan::importer {

// What one decoder layer keeps per sequence while serving (docs/import.md, "The cache").
enum class LayerCache : uint8_t {
  kFull,     // keys and values of every position
  kSliding,  // of the last `sliding_window` positions
  kChunked,  // of the current chunk's positions (attention_chunk_size, Llama 4)
  kState,    // a fixed-size state per sequence (linear attention, SSM, short conv): no ctx
  kHybrid,   // full attention and a state side by side in one layer (Falcon-H1)
  kShared,   // reads an earlier layer's cache (num_kv_shared_layers): none of its own
  kNone,     // keeps nothing (an MLP-only block of a hybrid pattern)
};

// The per-sequence state of a kState / kHybrid layer, shapes without the batch dimension, from
// the config keys transformers' cache classes size them with.
struct StateGeometry {
  std::string kind;           // "mamba", "mamba2", "gated_deltanet", "lightning", "short_conv"
  std::vector<int64_t> conv;  // the convolution window, empty when the layer has none
  std::vector<int64_t> ssm;   // the recurrent state, empty when the layer has none
  std::string why;            // the config keys, for the summary and docs
};

struct HfConfig {
  std::string path;                // the file, for messages
  std::string model_type;          // "llama", "qwen3_moe", "deepseek_v3", "gpt_oss", ...
  int64_t layers = 0;              // num_hidden_layers
  int64_t hidden = 0;              // hidden_size
  int64_t heads = 0;               // num_attention_heads
  int64_t kv_heads = 0;            // num_key_value_heads (default: heads)
  int64_t head_dim = 0;            // head_dim (default: hidden / heads)
  int64_t vocab = 0;               // vocab_size
  int64_t max_positions = 0;       // max_position_embeddings
  int64_t intermediate = 0;        // intermediate_size (dense MLP; Mixtral's and gpt-oss's experts)
  bool tie_embeddings = false;     // tie_word_embeddings
  bool tie_given = false;          // the key is present (else: tied iff there is no lm_head)
  bool known = false;              // model_type is a family import knows by name (families.h)
  bool complete = true;            // every architecture key was found (else: no checks, no cache)
  std::vector<std::string> notes;  // what import assumed because the config did not say
  // The cache: one LayerCache per layer (layer_types, layers_block_type, a sliding window on
  // every layer when the config has one but no layer_types and does not turn it off, ...).
  std::optional<int64_t> sliding_window;
  std::optional<int64_t> attention_chunk;  // attention_chunk_size (kChunked layers)
  std::vector<LayerCache> layer_cache;     // one per layer
  std::optional<StateGeometry> state;      // for kState / kHybrid layers; nullopt: unknown
  // Mixture of experts (0 experts: dense).
  int64_t experts = 0;             // num_experts | num_local_experts | n_routed_experts
  int64_t moe_intermediate = 0;    // moe_intermediate_size (default: intermediate)
  int64_t shared_experts = 0;      // n_shared_experts
  int64_t first_dense_layers = 0;  // first_k_dense_replace
  int64_t mtp_layers = 0;          // num_nextn_predict_layers
  // Multi-head latent attention (DeepSeek-V3, Kimi-K2): kv_lora_rank > 0.
  int64_t q_lora_rank = 0;  // 0: no low-rank query (q_proj)
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t index_head_dim = 0;  // DeepSeek-V3.2's sparse-attention indexer keys (0: none)
  // quantization_config
  std::string quant_method;                    // "", "mxfp4", "fp8", ...
  int64_t block_rows = 128, block_cols = 128;  // weight_block_size (fp8)
  std::string torch_dtype;                     // torch_dtype | dtype ("bfloat16")

  [[nodiscard]] bool mla() const { return kv_lora_rank > 0; }
  [[nodiscard]] bool moe() const { return experts > 0; }
};

// Reads and checks `path` (config.json): kIo when it cannot be read, kInvalidInput naming the
// file and key when it is not JSON or a value has the wrong type or is out of range
// ("config.json: num_hidden_layers is -1; expected an integer in [1, 4096]"). A model_type import
// does not know is read all the same (`known` false, a note). An architecture key that is
// missing (num_hidden_layers, hidden_size, ...; their other spellings and a text_config are
// tried first) is an error when `strict`, else `complete` is false and a note says which.
base::Result<HfConfig> ReadHfConfig(const std::string& path, bool strict = false);
// The config of a folder without config.json: nothing known, `complete` false, a note.
HfConfig NoConfig(const std::string& path);

}  // namespace loadplan::importer
