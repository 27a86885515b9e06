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

struct HfConfig {
  std::string path;             // the file, for messages
  std::string model_type;       // "llama", "qwen3_moe", "deepseek_v3", "gpt_oss", ...
  int64_t layers = 0;           // num_hidden_layers
  int64_t hidden = 0;           // hidden_size
  int64_t heads = 0;            // num_attention_heads
  int64_t kv_heads = 0;         // num_key_value_heads (default: heads)
  int64_t head_dim = 0;         // head_dim (default: hidden / heads)
  int64_t vocab = 0;            // vocab_size
  int64_t max_positions = 0;    // max_position_embeddings
  int64_t intermediate = 0;     // intermediate_size (dense MLP; Mixtral's and gpt-oss's experts)
  bool tie_embeddings = false;  // tie_word_embeddings
  bool tie_given = false;       // the key is present (else: tied iff there is no lm_head)
  // Sliding-window attention: the window, and which layers use it (layer_types, or every
  // layer when the config has a window but no layer_types and does not turn it off).
  std::optional<int64_t> sliding_window;
  std::vector<bool> sliding_layers;  // one per layer
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
  // quantization_config
  std::string quant_method;                    // "", "mxfp4", "fp8", ...
  int64_t block_rows = 128, block_cols = 128;  // weight_block_size (fp8)
  std::string torch_dtype;                     // torch_dtype | dtype ("bfloat16")

  [[nodiscard]] bool mla() const { return kv_lora_rank > 0; }
  [[nodiscard]] bool moe() const { return experts > 0; }
};

// Reads and checks `path` (config.json): kIo when it cannot be read, kInvalidInput naming the
// file and key when it is not JSON, its model_type is not one import knows (families.h), a required
// key is missing, or a value has the wrong type or is out of range ("config.json: num_hidden_layers
// is -1; expected an integer >= 1").
base::Result<HfConfig> ReadHfConfig(const std::string& path);

}  // namespace loadplan::importer
