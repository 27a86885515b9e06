// config.json -> what each layer caches: attention kinds per layer and the state geometry of
// linear-attention and state-space layers, from the keys transformers' configuration and cache
// classes use (transformers 5.17; docs/import.md, "The cache").
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "importer/config_reader.h"

namespace loadplan::importer {
namespace {

using nlohmann::json;

// A layer_types / layers_block_type entry -> the cache kind; nullopt for a word not known here.
std::optional<LayerCache> KindOf(std::string_view word) {
  static constexpr std::array<std::pair<std::string_view, LayerCache>, 21> kWords = {{
      {"deepseek_sparse_attention", LayerCache::kFull},
      {"full_attention", LayerCache::kFull},
      {"attention", LayerCache::kFull},
      {"global_attention", LayerCache::kFull},
      {"full", LayerCache::kFull},
      {"sliding_attention", LayerCache::kSliding},
      {"sliding", LayerCache::kSliding},
      {"local_attention", LayerCache::kSliding},
      {"local", LayerCache::kSliding},
      {"chunked_attention", LayerCache::kChunked},
      {"linear_attention", LayerCache::kState},
      {"mamba", LayerCache::kState},
      {"mamba2", LayerCache::kState},
      {"conv", LayerCache::kState},
      {"short_conv", LayerCache::kState},
      {"linear", LayerCache::kState},
      {"deltanet", LayerCache::kState},
      {"gated_deltanet", LayerCache::kState},
      {"recurrent", LayerCache::kState},
      {"hybrid", LayerCache::kHybrid},
      {"mlp", LayerCache::kNone},
  }};
  for (const auto& [w, k] : kWords) {
    if (w == word) return k;
  }
  return std::nullopt;
}

// Nemotron-H's hybrid_override_pattern: M mamba, * attention, - MLP, E MoE.
std::optional<LayerCache> PatternKind(char ch) {
  switch (ch) {
    case 'M': return LayerCache::kState;
    case '*': return LayerCache::kFull;
    case '-':
    case 'E': return LayerCache::kNone;
    default: return std::nullopt;
  }
}

// One kind per layer from a list of words (layer_types, layers_block_type) or a pattern
// string; false (with the config marked unknown) when an entry is not understood.
bool KindsFromList(ConfigReader& r, const char* key, const json& list, HfConfig& c) {
  const size_t n = list.is_array()    ? list.size()
                   : list.is_string() ? list.get<std::string>().size()
                                      : 0;
  if (n != static_cast<size_t>(c.layers)) {
    r.Fail(fmt::format("{} has {} entries; num_hidden_layers is {}", key, n, c.layers));
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    std::optional<LayerCache> k;
    std::string word;
    if (list.is_string()) {
      word = std::string(1, list.get<std::string>()[i]);
      k = PatternKind(word[0]);
    } else if (list[i].is_string()) {
      word = list[i].get<std::string>();
      k = KindOf(word);
    } else if (list[i].is_number_integer()) {  // MiniMax's attn_type_list: 0 linear, 1 full
      word = list[i].dump();
      if (word == "0") k = LayerCache::kState;
      if (word == "1") k = LayerCache::kFull;
    } else {
      r.Fail(fmt::format("{}[{}] is {}; expected a string", key, i, list[i].dump()));
      return false;
    }
    if (!k) {
      c.notes.push_back(
          fmt::format("{}[{}] is \"{}\", a layer kind import does not know: the cache "
                      "geometry is unknown (--kv-bytes-per-token sizes the cache)",
                      key, i, word));
      c.layer_cache.clear();
      return false;
    }
    c.layer_cache[i] = *k;
  }
  return true;
}

// A window or chunk the config does not give makes that layer attend to the whole context.
void Degrade(HfConfig& c) {
  for (LayerCache& k : c.layer_cache) {
    if (k == LayerCache::kSliding && !c.sliding_window) k = LayerCache::kFull;
    if (k == LayerCache::kChunked && !c.attention_chunk) k = LayerCache::kFull;
  }
}

bool AllStateModel(std::string_view t) {
  return t == "mamba" || t == "mamba2" || t == "falcon_mamba" || t == "rwkv" || t == "xlstm";
}

// Gemma 2 alternates sliding and full layers (pattern 2); Gemma 3 and Cohere 2 say
// sliding_window_pattern. 0: no pattern (every layer slides, as Mistral).
int64_t SlidingPattern(ConfigReader& r, const HfConfig& c) {
  if (r.Find({"sliding_window_pattern"}))
    return r.Int({"sliding_window_pattern"}, 1, std::nullopt, kMaxLayers);
  return c.model_type == "gemma2" ? 2 : 0;
}

// Every layer's kind from its index.
template <typename KindOfLayer>
void ByIndex(HfConfig& c, KindOfLayer kind) {
  for (int64_t l = 0; l < c.layers; ++l) c.layer_cache[static_cast<size_t>(l)] = kind(l);
}

// Kinds a config gives as a rule rather than a list; false when it gives none.
bool KindsFromRule(ConfigReader& r, HfConfig& c) {
  if (r.Find({"attn_layer_period"}) && r.Find({"mamba_d_state"})) {
    // Jamba: layer i attends when i % attn_layer_period == attn_layer_offset, else Mamba.
    const int64_t p = r.Int({"attn_layer_period"}, 1, std::nullopt, kMaxLayers);
    const int64_t o = r.Int({"attn_layer_offset"}, 0, 0, kMaxLayers);
    if (r.error().ok())  // a refused period never divides
      ByIndex(c, [&](int64_t l) { return l % p == o ? LayerCache::kFull : LayerCache::kState; });
    return true;
  }
  const int64_t p = SlidingPattern(r, c);
  if (!c.sliding_window || p == 0) return false;
  // transformers' rule for these classes: layer i slides unless (i + 1) % pattern == 0.
  ByIndex(c,
          [&](int64_t l) { return (l + 1) % p == 0 ? LayerCache::kFull : LayerCache::kSliding; });
  return true;
}

void ReadLayerKinds(ConfigReader& r, HfConfig& c) {
  c.layer_cache.assign(static_cast<size_t>(c.layers), LayerCache::kFull);
  for (const char* key :
       {"layer_types", "layers_block_type", "hybrid_override_pattern", "attn_type_list"}) {
    if (const json* list = r.Find({key})) {
      if (KindsFromList(r, key, *list, c)) Degrade(c);
      return;
    }
  }
  if (c.model_type == "falcon_h1") {
    std::fill(c.layer_cache.begin(), c.layer_cache.end(), LayerCache::kHybrid);
  } else if (AllStateModel(c.model_type)) {
    std::fill(c.layer_cache.begin(), c.layer_cache.end(), LayerCache::kState);
  } else if (!KindsFromRule(r, c) && c.sliding_window) {
    std::fill(c.layer_cache.begin(), c.layer_cache.end(), LayerCache::kSliding);
  }
}

// Gemma 3n: the last num_kv_shared_layers layers read the cache of an earlier layer.
void ReadSharing(ConfigReader& r, HfConfig& c) {
  const int64_t shared = r.Int({"num_kv_shared_layers"}, 0, 0, kMaxLayers);
  for (int64_t l = std::max<int64_t>(0, c.layers - shared); l < c.layers; ++l) {
    c.layer_cache[static_cast<size_t>(l)] = LayerCache::kShared;
  }
}

// Mamba-2 (Falcon-H1's mamba_* keys, Nemotron-H's mamba_num_heads, mamba2's own): conv over
// the SSM input and the B/C groups, state [heads, head_dim, d_state].
std::optional<StateGeometry> Mamba2(ConfigReader& r, const HfConfig& c) {
  const int64_t d_state = r.Int({"mamba_d_state", "ssm_state_size", "state_size"}, 1);
  const int64_t conv = r.Int({"mamba_d_conv", "conv_kernel"}, 1, 4);
  const int64_t groups = r.Int({"mamba_n_groups", "n_groups"}, 1, 1);
  const int64_t heads = r.Int({"mamba_n_heads", "mamba_num_heads", "num_heads"}, 1);
  const int64_t expand = r.Int({"mamba_expand", "expand"}, 1, 2);
  // The SSM's width: Falcon-H1's mamba_d_ssm, Nemotron-H's heads * head_dim, else expand * hidden.
  const bool by_heads = r.Find({"mamba_num_heads"}) != nullptr;
  const int64_t head = r.Int({"mamba_d_head", "mamba_head_dim", "head_dim"}, 1,
                             heads > 0 ? expand * c.hidden / heads : 0);
  const int64_t inner = r.Int({"mamba_d_ssm"}, 1, by_heads ? heads * head : expand * c.hidden);
  return StateGeometry{.kind = "mamba2",
                       .conv = {inner + 2 * groups * d_state, conv},
                       .ssm = {heads, head, d_state},
                       .why =
                           "conv [d_ssm + 2*n_groups*d_state, d_conv], ssm [n_heads, d_head, "
                           "d_state]"};
}

// Gated DeltaNet (Qwen3-Next): conv over q, k and v; state [v_heads, k_dim, v_dim].
std::optional<StateGeometry> GatedDeltaNet(ConfigReader& r) {
  const int64_t kh = r.Int({"linear_num_key_heads"}, 1), kd = r.Int({"linear_key_head_dim"}, 1);
  const int64_t vh = r.Int({"linear_num_value_heads"}, 1);
  const int64_t vd = r.Int({"linear_value_head_dim"}, 1);
  const int64_t conv = r.Int({"linear_conv_kernel_dim"}, 1, 4);
  return StateGeometry{.kind = "gated_deltanet",
                       .conv = {2 * kh * kd + vh * vd, conv},
                       .ssm = {vh, kd, vd},
                       .why =
                           "conv [2*linear_num_key_heads*linear_key_head_dim + "
                           "linear_num_value_heads*linear_value_head_dim, "
                           "linear_conv_kernel_dim], state [linear_num_value_heads, "
                           "linear_key_head_dim, linear_value_head_dim]"};
}

std::optional<StateGeometry> ReadState(ConfigReader& r, const HfConfig& c) {
  if (r.Find({"linear_num_value_heads"})) return GatedDeltaNet(r);
  if (r.Find({"mamba_n_heads", "mamba_num_heads"}) || c.model_type == "mamba2") return Mamba2(r, c);
  if (r.Find({"mamba_d_state"}) || c.model_type == "mamba" || c.model_type == "falcon_mamba") {
    const int64_t d_state = r.Int({"mamba_d_state", "state_size"}, 1);
    const int64_t conv = r.Int({"mamba_d_conv", "conv_kernel"}, 1, 4);
    const int64_t inner = r.Int({"mamba_expand", "expand"}, 1, 2) * c.hidden;
    return StateGeometry{.kind = "mamba",
                         .conv = {inner, conv},
                         .ssm = {inner, d_state},
                         .why =
                             "conv [expand*hidden_size, d_conv], ssm [expand*hidden_size, "
                             "d_state]"};
  }
  if (r.Find({"conv_L_cache"})) {
    return StateGeometry{.kind = "short_conv",
                         .conv = {c.hidden, r.Int({"conv_L_cache"}, 1)},
                         .why = "conv [hidden_size, conv_L_cache]"};
  }
  if (c.model_type == "minimax") {
    return StateGeometry{.kind = "lightning",
                         .ssm = {c.heads, c.head_dim, c.head_dim},
                         .why = "state [num_attention_heads, head_dim, head_dim]"};
  }
  return std::nullopt;
}

}  // namespace

void ReadCacheGeometry(ConfigReader& r, HfConfig& c) {
  const bool enabled = r.Bool("use_sliding_window", true);
  if (r.Find({"sliding_window"}) != nullptr && enabled)
    c.sliding_window = r.Int({"sliding_window"}, 1, std::nullopt, kMaxLong);
  c.attention_chunk = r.OptionalInt({"attention_chunk_size"}, 1, kMaxLong);
  if (!c.complete) return;
  ReadLayerKinds(r, c);
  if (c.layer_cache.empty()) return;  // a kind not known here: the geometry is unknown
  ReadSharing(r, c);
  const bool stateful = std::any_of(c.layer_cache.begin(), c.layer_cache.end(), [](LayerCache k) {
    return k == LayerCache::kState || k == LayerCache::kHybrid;
  });
  if (!stateful) return;
  c.state = ReadState(r, c);
  if (!c.state) {
    c.notes.push_back(fmt::format(
        "{}: layers keep a recurrent state whose size import cannot tell from this config: the "
        "cache geometry is unknown (--kv-bytes-per-token sizes the attention part)",
        r.path()));
  }
}

}  // namespace loadplan::importer
