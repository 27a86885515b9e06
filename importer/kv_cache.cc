// KV-cache state buffers from the config.
#include "importer/kv_cache.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace loadplan::importer {
namespace {

bool Sliding(const HfConfig& c, int64_t layer) {
  return c.sliding_window && static_cast<size_t>(layer) < c.sliding_layers.size() &&
         c.sliding_layers[static_cast<size_t>(layer)];
}

// Elements per token (one slot) of one layer's cache.
int64_t SlotElements(const HfConfig& c) {
  return c.mla() ? c.kv_lora_rank + c.qk_rope_head_dim : 2 * c.kv_heads * c.head_dim;
}

}  // namespace

std::string KvCacheName(int64_t layer) { return fmt::format("kv_cache.{}", layer); }

void AddKvCache(verifier::ManifestBuilder& b, const HfConfig& c, base::Dtype dtype) {
  // In name order ("kv_cache.10" before "kv_cache.2"): the builder then has nothing to sort
  // when the rest comes in name order too.
  std::vector<int64_t> layers(static_cast<size_t>(c.layers));
  for (int64_t l = 0; l < c.layers; ++l) layers[static_cast<size_t>(l)] = l;
  std::sort(layers.begin(), layers.end(),
            [](int64_t x, int64_t y) { return KvCacheName(x) < KvCacheName(y); });
  for (const int64_t l : layers) {
    const std::string slots =
        Sliding(c, l) ? fmt::format("min(ctx, {})", *c.sliding_window) : "ctx";
    if (c.mla()) {
      b.State(KvCacheName(l), dtype, {"batch", slots, c.kv_lora_rank + c.qk_rope_head_dim});
    } else {
      b.State(KvCacheName(l), dtype, {"batch", slots, 2, c.kv_heads, c.head_dim});
    }
  }
}

int64_t KvBytesPerToken(const HfConfig& c, base::Dtype dtype) {
  int64_t layers = 0;
  for (int64_t l = 0; l < c.layers; ++l) layers += Sliding(c, l) ? 0 : 1;
  return layers * SlotElements(c) * static_cast<int64_t>(base::DtypeBits(dtype)) / 8;
}

}  // namespace loadplan::importer
