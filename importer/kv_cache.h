// The KV cache of an imported model, as state buffers over `batch` and `ctx`: one per
// attention layer, keys and values of every KV head ([batch, slots, 2, kv_heads, head_dim]), a
// sliding layer holding min(ctx, window) slots; MLA's compressed cache (DeepSeek-V3, Kimi-K2)
// [batch, ctx, kv_lora_rank + qk_rope_head_dim]. MTP layers get none (docs/import.md).
#pragma once

#include <cstdint>
#include <string>

#include "base/dtype.h"
#include "importer/hf_config.h"
#include "verifier/builder.h"

namespace loadplan::importer {

// "kv_cache.<layer>"
std::string KvCacheName(int64_t layer);
void AddKvCache(verifier::ManifestBuilder& b, const HfConfig& c, base::Dtype dtype);
// Bytes one token of context takes in every full-attention layer's cache together (sliding
// layers stop growing at their window): 131072 for Llama 3.1 8B in BF16.
int64_t KvBytesPerToken(const HfConfig& c, base::Dtype dtype);

}  // namespace loadplan::importer
