// Cache state buffers from the config's per-layer kinds.
#include "importer/kv_cache.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace loadplan::importer {
namespace {

using verifier::Dims;

// Elements per token (one slot) of one attention layer's cache.
int64_t SlotElements(const HfConfig& c) {
  return c.mla() ? c.kv_lora_rank + c.qk_rope_head_dim : 2 * c.kv_heads * c.head_dim;
}

int64_t Bytes(int64_t elements, base::Dtype dtype) {
  return elements * static_cast<int64_t>(base::DtypeBits(dtype)) / 8;
}

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// The slots expression of an attention layer, or "" for a layer without a KV cache.
std::string Slots(const HfConfig& c, LayerCache k) {
  switch (k) {
    case LayerCache::kFull:
    case LayerCache::kHybrid: return "ctx";
    case LayerCache::kSliding: return fmt::format("min(ctx, {})", *c.sliding_window);
    case LayerCache::kChunked: return fmt::format("min(ctx, {})", *c.attention_chunk);
    case LayerCache::kState:
    case LayerCache::kShared:
    case LayerCache::kNone: return "";
  }
  return "";
}

void AddKv(verifier::ManifestBuilder& b, const HfConfig& c, int64_t l, const std::string& slots,
           base::Dtype dtype) {
  if (c.mla()) {
    b.State(KvCacheName(l), dtype, {"batch", slots, c.kv_lora_rank + c.qk_rope_head_dim});
  } else {
    b.State(KvCacheName(l), dtype, {"batch", slots, 2, c.kv_heads, c.head_dim});
  }
}

void AddState(verifier::ManifestBuilder& b, const StateGeometry& s, int64_t l, base::Dtype dtype,
              CacheOutcome& out) {
  const auto add = [&](const char* what, const std::vector<int64_t>& shape, base::Dtype type) {
    if (shape.empty()) return;
    Dims dims{"batch"};
    dims.insert(dims.end(), shape.begin(), shape.end());
    b.State(fmt::format("{}.{}", what, l), type, dims);
    out.state_bytes += Bytes(Product(shape), type);
  };
  add("conv_state", s.conv, dtype);
  // The recurrent state accumulates over the whole sequence: F32, as transformers' kernels keep
  // it (measured against its cache in the zoo: Qwen3-Next, Falcon-H1).
  add("ssm_state", s.ssm, base::Dtype::kF32);
  ++out.state_layers;
}

CacheOutcome Given(verifier::ManifestBuilder& b, int64_t bytes_per_token) {
  b.State("kv_cache", base::Dtype::kU8, {"batch", "ctx", bytes_per_token});
  return {.kv_layers = 1,
          .bytes_per_token = bytes_per_token,
          .notes = {fmt::format("the cache is one buffer kv_cache of {} bytes per token of context "
                                "(--kv-bytes-per-token), not the config's geometry",
                                bytes_per_token)}};
}

}  // namespace

std::string KvCacheName(int64_t layer) { return fmt::format("kv_cache.{}", layer); }

CacheOutcome AddCache(verifier::ManifestBuilder& b, const HfConfig& c, base::Dtype dtype,
                      std::optional<int64_t> kv_bytes_per_token) {
  if (kv_bytes_per_token) return Given(b, *kv_bytes_per_token);
  CacheOutcome out;
  const bool stateless = std::none_of(c.layer_cache.begin(), c.layer_cache.end(), [](LayerCache k) {
    return k == LayerCache::kState || k == LayerCache::kHybrid;
  });
  if (!c.complete || c.layer_cache.empty() || (!stateless && !c.state)) {
    out.notes.push_back(
        "no cache is planned (its geometry is unknown): the serve peak leaves it out; "
        "--kv-bytes-per-token N plans one of N bytes per token of context");
    return out;
  }
  // In name order ("kv_cache.10" before "kv_cache.2"): the builder then has nothing to sort
  // when the rest comes in name order too.
  std::vector<int64_t> layers(static_cast<size_t>(c.layers));
  std::iota(layers.begin(), layers.end(), 0);
  std::sort(layers.begin(), layers.end(),
            [](int64_t x, int64_t y) { return KvCacheName(x) < KvCacheName(y); });
  for (const int64_t l : layers) {
    const LayerCache k = c.layer_cache[static_cast<size_t>(l)];
    if (const std::string slots = Slots(c, k); !slots.empty()) {
      AddKv(b, c, l, slots, dtype);
      ++out.kv_layers;
      if (slots == "ctx") out.bytes_per_token += Bytes(SlotElements(c), dtype);
      if (c.index_head_dim > 0) {  // DeepSeek-V3.2: the indexer's keys beside the latent cache
        b.State(fmt::format("index_cache.{}", l), dtype, {"batch", slots, c.index_head_dim});
        if (slots == "ctx") out.bytes_per_token += Bytes(c.index_head_dim, dtype);
      }
    }
    if (k == LayerCache::kState || k == LayerCache::kHybrid) AddState(b, *c.state, l, dtype, out);
  }
  if (out.kv_layers == 0 && out.state_layers == 0) {
    out.notes.push_back(fmt::format(
        "{}: no layer keeps a cache of its own (every layer shared or MLP-only): none is planned",
        c.path));
  }
  return out;
}

}  // namespace loadplan::importer
