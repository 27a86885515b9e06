// config.json -> HfConfig, with an error that names the file and the key.
#include "importer/hf_config.h"

#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/input_file.h"
#include "importer/config_reader.h"
#include "importer/family_names.h"

namespace loadplan::importer {

using nlohmann::json;

const json* ConfigReader::Find(std::initializer_list<const char*> keys) const {
  for (const char* k : keys) {
    const auto it = doc_.find(k);
    if (it != doc_.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

int64_t ConfigReader::Int(std::initializer_list<const char*> keys, int64_t min,
                          std::optional<int64_t> fallback, int64_t max) {
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
    Fail(
        fmt::format("{} is {}; expected an integer in [{}, {}]", KeyOf(keys), v->dump(), min, max));
    return 0;
  }
  return v->get<int64_t>();
}

std::optional<int64_t> ConfigReader::OptionalInt(std::initializer_list<const char*> keys,
                                                 int64_t min, int64_t max) {
  if (Find(keys) == nullptr) return std::nullopt;
  return Int(keys, min, std::nullopt, max);
}

bool ConfigReader::Bool(const char* key, bool fallback) {
  const json* v = Find({key});
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) Fail(fmt::format("{} is {}; expected true or false", key, v->dump()));
  return v->is_boolean() ? v->get<bool>() : fallback;
}

std::string ConfigReader::String(std::initializer_list<const char*> keys) {
  const json* v = Find(keys);
  if (v == nullptr) return {};
  if (!v->is_string()) Fail(fmt::format("{} is {}; expected a string", KeyOf(keys), v->dump()));
  return v->is_string() ? v->get<std::string>() : std::string();
}

void ConfigReader::Fail(std::string what) {
  if (error_.ok()) error_ = base::Status::Error(fmt::format("{}: {}", path_, what));
}

const char* ConfigReader::KeyOf(std::initializer_list<const char*> keys) const {
  for (const char* k : keys) {
    if (doc_.contains(k)) return k;
  }
  return *keys.begin();
}

namespace {

constexpr uint64_t kConfigBytes = uint64_t{16} << 20;  // a config.json: a few KB in practice

base::Status Invalid(const std::string& path, std::string_view what) {
  return base::Status::Error(fmt::format("{}: {}", path, what));
}

constexpr int64_t kAssumedPositions = 4096;  // ctx's bound when the config names none

// The architecture keys, under the names transformers' configuration classes use (and the
// other spellings of older classes: GPT-2's n_layer, n_embd, n_head). A key that is missing is
// an error when `strict`; else it is listed in `missing` and the config is incomplete.
class CoreKeys {
 public:
  CoreKeys(ConfigReader& r, bool strict) : r_(r), strict_(strict) {}
  int64_t Required(std::initializer_list<const char*> keys, int64_t min, int64_t max = kMaxDim) {
    if (strict_ || r_.Find(keys) != nullptr) return r_.Int(keys, min, std::nullopt, max);
    missing_.emplace_back(*keys.begin());
    return 0;
  }
  [[nodiscard]] const std::vector<std::string>& missing() const { return missing_; }

 private:
  ConfigReader& r_;
  bool strict_;
  std::vector<std::string> missing_;
};

void ReadCore(ConfigReader& r, bool strict, HfConfig& c) {
  CoreKeys k(r, strict);
  c.layers = k.Required({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, 1, kMaxLayers);
  c.hidden = k.Required({"hidden_size", "n_embd", "d_model"}, 1);
  c.heads = k.Required({"num_attention_heads", "n_head", "num_heads", "n_heads"}, 1);
  c.kv_heads = r.Int({"num_key_value_heads", "num_kv_heads", "n_head_kv"}, 1, c.heads);
  // Multi-query attention (GPT-BigCode, Falcon's old decoder): one KV head, whatever else the
  // config says (the classes read only multi_query there).
  if (r.Bool("multi_query", false) && !r.Bool("new_decoder_architecture", false)) c.kv_heads = 1;
  c.head_dim = r.Int({"head_dim"}, 1, c.heads > 0 ? c.hidden / c.heads : 0);
  c.vocab = k.Required({"vocab_size", "padded_vocab_size"}, 1, kMaxLong);
  const json* positions = r.Find({"max_position_embeddings", "n_positions", "max_seq_len"});
  c.max_positions = positions || strict
                        ? r.Int({"max_position_embeddings", "n_positions", "max_seq_len"}, 1,
                                std::nullopt, kMaxLong)
                        : kAssumedPositions;
  if (!positions && !strict) {
    c.notes.push_back(
        fmt::format("{} names no max_position_embeddings: ctx goes up to {} "
                    "(--max-ctx sets it)",
                    r.path(), kAssumedPositions));
  }
  c.intermediate = r.Int({"intermediate_size", "ffn_hidden_size", "n_inner"}, 1, 0);
  if (k.missing().empty() && c.head_dim == 0) {
    r.Fail(fmt::format("head_dim is missing and hidden_size / num_attention_heads is 0 ({} / {})",
                       c.hidden, c.heads));
  }
  if (c.kv_heads * c.head_dim > kMaxDim) {
    r.Fail(fmt::format("num_key_value_heads * head_dim is {} * {}; expected at most {}", c.kv_heads,
                       c.head_dim, kMaxDim));
  }
  if (!k.missing().empty()) {
    c.complete = false;
    c.notes.push_back(fmt::format(
        "{} has no {}: nothing is checked against the config and the cache geometry is unknown "
        "(--kv-bytes-per-token sizes the cache)",
        r.path(), fmt::join(k.missing(), ", ")));
  }
}

void ReadMoe(ConfigReader& r, HfConfig& c) {
  c.experts = r.Int({"num_experts", "num_local_experts", "n_routed_experts"}, 0, 0, kMaxExperts);
  c.moe_intermediate = r.Int({"moe_intermediate_size"}, 1, c.intermediate);
  c.shared_experts = r.Int({"n_shared_experts"}, 0, 0, kMaxExperts);
  c.first_dense_layers = r.Int({"first_k_dense_replace"}, 0, 0, kMaxLayers);
  c.mtp_layers = r.Int({"num_nextn_predict_layers"}, 0, 0, 64);
}

void ReadMla(ConfigReader& r, HfConfig& c) {
  c.kv_lora_rank = r.Int({"kv_lora_rank"}, 1, 0);
  if (c.kv_lora_rank == 0) return;
  c.q_lora_rank = r.Int({"q_lora_rank"}, 1, 0);
  c.qk_rope_head_dim = r.Int({"qk_rope_head_dim"}, 1);
  c.qk_nope_head_dim = r.Int({"qk_nope_head_dim"}, 1);
  c.v_head_dim = r.Int({"v_head_dim"}, 1);
  if (r.Find({"index_topk"}) != nullptr) c.index_head_dim = r.Int({"index_head_dim"}, 1, 128);
}

void ReadQuantization(ConfigReader& r, HfConfig& c) {
  const json* q = r.Find({"quantization_config"});
  if (q == nullptr) return;
  if (!q->is_object()) {
    r.Fail("quantization_config is not an object");
    return;
  }
  ConfigReader qr(c.path, *q);
  c.quant_method = qr.String({"quant_method"});
  if (const json* b = qr.Find({"weight_block_size"})) {
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() ||
        !(*b)[1].is_number_integer() || (*b)[0].get<int64_t>() < 1 || (*b)[1].get<int64_t>() < 1 ||
        (*b)[0].get<int64_t>() > kMaxDim || (*b)[1].get<int64_t>() > kMaxDim) {
      qr.Fail(fmt::format("quantization_config.weight_block_size is {}; expected [rows, cols]",
                          b->dump()));
    } else {
      c.block_rows = (*b)[0].get<int64_t>();
      c.block_cols = (*b)[1].get<int64_t>();
    }
  }
  if (!qr.error().ok()) r.Fail(qr.error().message().substr(c.path.size() + 2));
}

// The object the architecture keys are in: the config itself, or its text_config (a
// multimodal model's language part) when only that one has them.
const json& ArchitectureOf(const json& doc, HfConfig& c) {
  const auto text = doc.find("text_config");
  const bool top = doc.contains("num_hidden_layers") || doc.contains("n_layer");
  if (top || text == doc.end() || !text->is_object()) return doc;
  c.notes.push_back(fmt::format("{}: the architecture is read from text_config", c.path));
  return *text;
}

}  // namespace

HfConfig NoConfig(const std::string& path) {
  HfConfig c{.path = path, .max_positions = kAssumedPositions, .complete = false};
  c.notes.push_back(fmt::format(
      "{} is absent: the model type is unknown, nothing is checked against a config, the cache "
      "geometry is unknown (--kv-bytes-per-token sizes the cache) and ctx goes up to {} "
      "(--max-ctx sets it)",
      path, kAssumedPositions));
  return c;
}

base::Result<HfConfig> ReadHfConfig(const std::string& path, bool strict) {
  base::Result<std::string> text = base::ReadInputFile(path, kConfigBytes, "config");
  if (!text.ok()) return text.status();
  const json doc = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Invalid(path, "not valid JSON");
  if (!doc.is_object()) return Invalid(path, "not a JSON object");
  HfConfig c{.path = path};
  ConfigReader top(c.path, doc);
  c.model_type = top.String({"model_type"});
  if (!top.error().ok()) return top.error();
  c.known = Supported(c.model_type);
  if (c.model_type.empty()) {
    if (strict) return Invalid(path, "model_type is missing");
    c.notes.push_back(fmt::format("{} names no model_type: read as a generic decoder", path));
  } else if (!c.known) {
    if (strict) {
      return Invalid(path, fmt::format("model_type \"{}\" is not one loadplan knows by name "
                                       "({}; without --strict it imports as a generic decoder)",
                                       c.model_type, fmt::join(SupportedModelTypes(), ", ")));
    }
    c.notes.push_back(fmt::format(
        "model_type \"{}\" is not one of the {} families loadplan knows by name: every tensor is "
        "bound as stored and nothing is checked against the config; the cache comes from the "
        "config's attention keys",
        c.model_type, SupportedModelTypes().size()));
  }
  ConfigReader r(c.path, ArchitectureOf(doc, c));
  ReadCore(r, strict, c);
  c.tie_given = top.Find({"tie_word_embeddings"}) != nullptr || r.Find({"tie_word_embeddings"});
  c.tie_embeddings = top.Find({"tie_word_embeddings"}) ? top.Bool("tie_word_embeddings", false)
                                                       : r.Bool("tie_word_embeddings", false);
  c.torch_dtype = top.String({"torch_dtype", "dtype"});
  if (!r.error().ok()) return r.error();
  if (!top.error().ok()) return top.error();
  ReadCacheGeometry(r, c);
  ReadMoe(r, c);
  ReadMla(r, c);
  ReadQuantization(top, c);
  if (!r.error().ok()) return r.error();
  if (!top.error().ok()) return top.error();
  return c;
}

}  // namespace loadplan::importer
