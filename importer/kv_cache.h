// The cache of an imported model, as state buffers over `batch` and `ctx` (docs/import.md, "The
// cache"): per attention layer its keys and values ([batch, slots, 2, kv_heads, head_dim];
// slots ctx, min(ctx, window) for a sliding layer, min(ctx, chunk) for a chunked one), MLA's
// compressed cache ([batch, ctx, kv_lora_rank + qk_rope_head_dim]); per linear-attention or
// state-space layer its conv and recurrent states ([batch, ...], no ctx). Shared and MLP-only
// layers get none, nor do MTP layers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "importer/hf_config.h"
#include "verifier/builder.h"

namespace loadplan::importer {

// "kv_cache.<layer>", "conv_state.<layer>", "ssm_state.<layer>"
std::string KvCacheName(int64_t layer);

struct CacheOutcome {
  size_t kv_layers = 0, state_layers = 0;  // layers with a KV cache, with a state
  int64_t bytes_per_token = 0;             // one token of context in every growing layer together
  int64_t state_bytes = 0;                 // one sequence's states in every state layer together
  std::vector<std::string> notes;          // an unknown geometry, a size given by the caller
};
// Adds the cache's state buffers. `kv_bytes_per_token` (the caller's) replaces the geometry:
// one buffer `kv_cache` U8 [batch, ctx, kv_bytes_per_token].
CacheOutcome AddCache(verifier::ManifestBuilder& b, const HfConfig& c, base::Dtype dtype,
                      std::optional<int64_t> kv_bytes_per_token = std::nullopt);

}  // namespace loadplan::importer
