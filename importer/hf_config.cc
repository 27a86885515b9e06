// config.json -> HfConfig, with an error that names the file and the key.
#include "importer/hf_config.h"

#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "importer/families.h"

namespace loadplan::importer {
namespace {

using nlohmann::json;

// Upper bounds of config integers: widths and counts of dims (2^20), vocabulary and positions
// (2^26: Llama 4's 10M context fits), layers, experts (a CUDA grid dimension), MTP layers.
constexpr int64_t kMaxDim = int64_t{1} << 20;
constexpr int64_t kMaxLong = int64_t{1} << 26;
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxExperts = 65535;

base::Status Invalid(const std::string& path, std::string_view what) {
  return base::Status::Error(fmt::format("{}: {}", path, what));
}

// Reads the keys of one config with the file's path in every message.
class Reader {
 public:
  Reader(const std::string& path, const json& doc) : path_(path), doc_(doc) {}

  // The first of `keys` that is present and not null; nullptr when none is.
  [[nodiscard]] const json* Find(std::initializer_list<const char*> keys) const {
    for (const char* k : keys) {
      const auto it = doc_.find(k);
      if (it != doc_.end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }

  // An integer in [min, max] under the first present key; `fallback` when none is present and
  // a fallback is given, else an error naming the first key. The bounds keep every product the
  // import forms (shapes, bytes per token) far inside int64 and every loop over layers and
  // experts short.
  int64_t Int(std::initializer_list<const char*> keys, int64_t min,
              std::optional<int64_t> fallback = std::nullopt, int64_t max = kMaxDim) {
    const json* v = Find(keys);
    if (v == nullptr) {
      if (fallback) return *fallback;
      Fail(fmt::format("{} is missing", *keys.begin()));
      return 0;
    }
    const bool in_range = v->is_number_integer() &&
                          !(v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(max)) &&
                          v->get<int64_t>() >= min && v->get<int64_t>() <= max;
    if (!in_range) {
      Fail(fmt::format("{} is {}; expected an integer in [{}, {}]", KeyOf(keys), v->dump(), min,
                       max));
      return 0;
    }
    return v->get<int64_t>();
  }

  bool Bool(const char* key, bool fallback) {
    const json* v = Find({key});
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) Fail(fmt::format("{} is {}; expected true or false", key, v->dump()));
    return v->is_boolean() ? v->get<bool>() : fallback;
  }

  std::string String(std::initializer_list<const char*> keys) {
    const json* v = Find(keys);
    if (v == nullptr) return {};
    if (!v->is_string()) Fail(fmt::format("{} is {}; expected a string", KeyOf(keys), v->dump()));
    return v->is_string() ? v->get<std::string>() : std::string();
  }

  void Fail(std::string what) {
    if (error_.ok()) error_ = Invalid(path_, what);
  }
  [[nodiscard]] const base::Status& error() const { return error_; }
  [[nodiscard]] const json& doc() const { return doc_; }

 private:
  // The key that is present among `keys` (for a message), else the first.
  [[nodiscard]] const char* KeyOf(std::initializer_list<const char*> keys) const {
    for (const char* k : keys) {
      if (doc_.contains(k)) return k;
    }
    return *keys.begin();
  }
  const std::string& path_;
  const json& doc_;
  base::Status error_;
};

void ReadSliding(Reader& r, HfConfig& c) {
  const json* types = r.Find({"layer_types"});
  const bool enabled = r.Bool("use_sliding_window", true);
  if (const json* w = r.Find({"sliding_window"}); w != nullptr && enabled) {
    c.sliding_window = r.Int({"sliding_window"}, 1, std::nullopt, kMaxLong);
  }
  c.sliding_layers.assign(static_cast<size_t>(c.layers), false);
  if (types != nullptr) {
    if (!types->is_array() || types->size() != static_cast<size_t>(c.layers)) {
      r.Fail(fmt::format("layer_types has {} entries; num_hidden_layers is {}",
                         types->is_array() ? types->size() : 0, c.layers));
      return;
    }
    for (size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      if (!t.is_string()) {
        r.Fail(fmt::format("layer_types[{}] is {}; expected a string", i, t.dump()));
        return;
      }
      c.sliding_layers[i] = t.get<std::string>() == "sliding_attention";
    }
    if (!c.sliding_window) std::fill(c.sliding_layers.begin(), c.sliding_layers.end(), false);
    return;
  }
  if (c.sliding_window) std::fill(c.sliding_layers.begin(), c.sliding_layers.end(), true);
}

void ReadMoe(Reader& r, HfConfig& c) {
  c.experts = r.Int({"num_experts", "num_local_experts", "n_routed_experts"}, 0, 0, kMaxExperts);
  c.moe_intermediate = r.Int({"moe_intermediate_size"}, 1, c.intermediate);
  c.shared_experts = r.Int({"n_shared_experts"}, 0, 0, kMaxExperts);
  c.first_dense_layers = r.Int({"first_k_dense_replace"}, 0, 0, kMaxLayers);
  c.mtp_layers = r.Int({"num_nextn_predict_layers"}, 0, 0, 64);
}

void ReadMla(Reader& r, HfConfig& c) {
  c.kv_lora_rank = r.Int({"kv_lora_rank"}, 1, 0);
  if (c.kv_lora_rank == 0) return;
  c.q_lora_rank = r.Int({"q_lora_rank"}, 1, 0);
  c.qk_rope_head_dim = r.Int({"qk_rope_head_dim"}, 1);
  c.qk_nope_head_dim = r.Int({"qk_nope_head_dim"}, 1);
  c.v_head_dim = r.Int({"v_head_dim"}, 1);
}

void ReadQuantization(Reader& r, HfConfig& c) {
  const json* q = r.Find({"quantization_config"});
  if (q == nullptr) return;
  if (!q->is_object()) {
    r.Fail("quantization_config is not an object");
    return;
  }
  Reader qr(c.path, *q);
  c.quant_method = qr.String({"quant_method"});
  if (const json* b = qr.Find({"weight_block_size"})) {
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() ||
        !(*b)[1].is_number_integer() || (*b)[0].get<int64_t>() < 1 || (*b)[1].get<int64_t>() < 1) {
      qr.Fail(fmt::format("quantization_config.weight_block_size is {}; expected [rows, cols]",
                          b->dump()));
    } else {
      c.block_rows = (*b)[0].get<int64_t>();
      c.block_cols = (*b)[1].get<int64_t>();
    }
  }
  if (!qr.error().ok()) r.Fail(qr.error().message().substr(c.path.size() + 2));
}

}  // namespace

base::Result<HfConfig> ReadHfConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return base::Status::Error(fmt::format("{}: cannot open", path), base::ErrorKind::kIo);
  std::stringstream ss;
  ss << in.rdbuf();
  const json doc = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Invalid(path, "not valid JSON");
  if (!doc.is_object()) return Invalid(path, "not a JSON object");
  HfConfig c{.path = path};
  Reader r(c.path, doc);
  c.model_type = r.String({"model_type"});
  if (c.model_type.empty()) r.Fail("model_type is missing");
  if (!r.error().ok()) return r.error();
  if (!Supported(c.model_type)) {  // before the other keys: they may mean something else there
    return Invalid(path, fmt::format("model_type \"{}\" is not one loadplan imports ({})",
                                     c.model_type, fmt::join(SupportedModelTypes(), ", ")));
  }
  c.layers = r.Int({"num_hidden_layers"}, 1, std::nullopt, kMaxLayers);
  c.hidden = r.Int({"hidden_size"}, 1);
  c.heads = r.Int({"num_attention_heads"}, 1);
  c.kv_heads = r.Int({"num_key_value_heads"}, 1, c.heads);
  c.head_dim = r.Int({"head_dim"}, 1, c.heads > 0 ? c.hidden / c.heads : 0);
  c.vocab = r.Int({"vocab_size"}, 1, std::nullopt, kMaxLong);
  c.max_positions = r.Int({"max_position_embeddings"}, 1, std::nullopt, kMaxLong);
  c.intermediate = r.Int({"intermediate_size"}, 1, 0);
  c.tie_given = r.Find({"tie_word_embeddings"}) != nullptr;
  c.tie_embeddings = r.Bool("tie_word_embeddings", false);
  c.torch_dtype = r.String({"torch_dtype", "dtype"});
  if (!r.error().ok()) return r.error();
  ReadSliding(r, c);
  ReadMoe(r, c);
  ReadMla(r, c);
  ReadQuantization(r, c);
  if (!r.error().ok()) return r.error();
  return c;
}

}  // namespace loadplan::importer
