// Expected tensor shapes per architecture, and the check of a folder against them.
#include "importer/families.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>

#include <fmt/format.h>

namespace loadplan::importer {
namespace {

using Shape = std::vector<int64_t>;

void Add(std::vector<Expect>& v, std::string key, Shape shape, std::string why,
         bool optional = false) {
  v.push_back({std::move(key), std::move(shape), std::move(why), optional});
}

void AddNorms(std::vector<Expect>& v, const HfConfig& c) {
  Add(v, "input_layernorm.weight", {c.hidden}, "hidden_size");
  Add(v, "post_attention_layernorm.weight", {c.hidden}, "hidden_size");
}

void AddGqa(std::vector<Expect>& v, const HfConfig& c) {
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  const std::string qw = "num_attention_heads*head_dim, hidden_size";
  const std::string kw = "num_key_value_heads*head_dim, hidden_size";
  Add(v, "self_attn.q_proj.weight", {q, c.hidden}, qw);
  Add(v, "self_attn.k_proj.weight", {kv, c.hidden}, kw);
  Add(v, "self_attn.v_proj.weight", {kv, c.hidden}, kw);
  Add(v, "self_attn.o_proj.weight", {c.hidden, q}, "hidden_size, num_attention_heads*head_dim");
  // Biases: qwen2 and gpt-oss always have q/k/v biases, llama with attention_bias.
  const bool bias = c.model_type == "qwen2" || c.model_type == "gpt_oss";
  Add(v, "self_attn.q_proj.bias", {q}, "num_attention_heads*head_dim", !bias);
  Add(v, "self_attn.k_proj.bias", {kv}, "num_key_value_heads*head_dim", !bias);
  Add(v, "self_attn.v_proj.bias", {kv}, "num_key_value_heads*head_dim", !bias);
  Add(v, "self_attn.o_proj.bias", {c.hidden}, "hidden_size", c.model_type != "gpt_oss");
  if (c.model_type == "qwen3" || c.model_type == "qwen3_moe") {
    Add(v, "self_attn.q_norm.weight", {c.head_dim}, "head_dim");
    Add(v, "self_attn.k_norm.weight", {c.head_dim}, "head_dim");
  }
  if (c.model_type == "gpt_oss") Add(v, "self_attn.sinks", {c.heads}, "num_attention_heads");
}

void AddMla(std::vector<Expect>& v, const HfConfig& c) {
  const int64_t qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
  if (c.q_lora_rank > 0) {
    Add(v, "self_attn.q_a_proj.weight", {c.q_lora_rank, c.hidden}, "q_lora_rank, hidden_size");
    Add(v, "self_attn.q_a_layernorm.weight", {c.q_lora_rank}, "q_lora_rank");
    Add(v, "self_attn.q_b_proj.weight", {c.heads * qk, c.q_lora_rank},
        "num_attention_heads*(qk_nope_head_dim+qk_rope_head_dim), q_lora_rank");
  } else {
    Add(v, "self_attn.q_proj.weight", {c.heads * qk, c.hidden},
        "num_attention_heads*(qk_nope_head_dim+qk_rope_head_dim), hidden_size");
  }
  Add(v, "self_attn.kv_a_proj_with_mqa.weight", {c.kv_lora_rank + c.qk_rope_head_dim, c.hidden},
      "kv_lora_rank+qk_rope_head_dim, hidden_size");
  Add(v, "self_attn.kv_a_layernorm.weight", {c.kv_lora_rank}, "kv_lora_rank");
  Add(v, "self_attn.kv_b_proj.weight",
      {c.heads * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank},
      "num_attention_heads*(qk_nope_head_dim+v_head_dim), kv_lora_rank");
  Add(v, "self_attn.o_proj.weight", {c.hidden, c.heads * c.v_head_dim},
      "hidden_size, num_attention_heads*v_head_dim");
}

// gate/up [inter, hidden], down [hidden, inter] under `prefix` ("mlp.", "mlp.experts.*.").
void AddGatedMlp(std::vector<Expect>& v, const std::string& prefix, int64_t hidden, int64_t inter,
                 const std::string& inter_key) {
  const std::string in = fmt::format("{}, hidden_size", inter_key);
  Add(v, prefix + "gate_proj.weight", {inter, hidden}, in);
  Add(v, prefix + "up_proj.weight", {inter, hidden}, in);
  Add(v, prefix + "down_proj.weight", {hidden, inter}, fmt::format("hidden_size, {}", inter_key));
}

void AddGptOssExperts(std::vector<Expect>& v, const HfConfig& c) {
  const int64_t e = c.experts, h = c.hidden, i = c.intermediate;
  Add(v, "mlp.router.weight", {e, h}, "num_local_experts, hidden_size");
  Add(v, "mlp.router.bias", {e}, "num_local_experts");
  if (c.quant_method != "mxfp4") {  // unquantized (BF16 fine-tunes): transformers' own layout
    Add(v, "mlp.experts.gate_up_proj", {e, h, 2 * i},
        "num_local_experts, hidden_size, 2*intermediate_size");
    Add(v, "mlp.experts.gate_up_proj_bias", {e, 2 * i}, "num_local_experts, 2*intermediate_size");
    Add(v, "mlp.experts.down_proj", {e, i, h}, "num_local_experts, intermediate_size, hidden_size");
    Add(v, "mlp.experts.down_proj_bias", {e, h}, "num_local_experts, hidden_size");
    return;
  }
  const std::string fc1 = "num_local_experts, 2*intermediate_size, hidden_size/32";
  const std::string fc2 = "num_local_experts, hidden_size, intermediate_size/32";
  Add(v, "mlp.experts.gate_up_proj_blocks", {e, 2 * i, h / 32, 16}, fc1 + ", 16");
  Add(v, "mlp.experts.gate_up_proj_scales", {e, 2 * i, h / 32}, fc1);
  Add(v, "mlp.experts.gate_up_proj_bias", {e, 2 * i}, "num_local_experts, 2*intermediate_size");
  Add(v, "mlp.experts.down_proj_blocks", {e, h, i / 32, 16}, fc2 + ", 16");
  Add(v, "mlp.experts.down_proj_scales", {e, h, i / 32}, fc2);
  Add(v, "mlp.experts.down_proj_bias", {e, h}, "num_local_experts, hidden_size");
}

void AddDeepSeekMoe(std::vector<Expect>& v, const HfConfig& c) {
  Add(v, "mlp.gate.weight", {c.experts, c.hidden}, "n_routed_experts, hidden_size");
  Add(v, "mlp.gate.e_score_correction_bias", {c.experts}, "n_routed_experts", true);
  AddGatedMlp(v, "mlp.experts.*.", c.hidden, c.moe_intermediate, "moe_intermediate_size");
  if (c.shared_experts > 0) {
    AddGatedMlp(v, "mlp.shared_experts.", c.hidden, c.moe_intermediate * c.shared_experts,
                "moe_intermediate_size*n_shared_experts");
  }
}

void AddMtp(std::vector<Expect>& v, const HfConfig& c) {
  Add(v, "enorm.weight", {c.hidden}, "hidden_size");
  Add(v, "hnorm.weight", {c.hidden}, "hidden_size");
  Add(v, "eh_proj.weight", {c.hidden, 2 * c.hidden}, "hidden_size, 2*hidden_size");
  Add(v, "shared_head.norm.weight", {c.hidden}, "hidden_size");
  Add(v, "shared_head.head.weight", {c.vocab, c.hidden}, "vocab_size, hidden_size", true);
  Add(v, "embed_tokens.weight", {c.vocab, c.hidden}, "vocab_size, hidden_size", true);
}

// "mlp.experts.17.up_proj.weight" -> "mlp.experts.*.up_proj.weight", expert 17.
std::string ExpertKey(std::string_view rest, int64_t& expert) {
  expert = -1;
  const size_t at = rest.find("experts.");
  if (at == std::string_view::npos) return std::string(rest);
  const size_t digits = at + 8;
  const char* first = rest.data() + digits;
  if (digits >= rest.size() || *first < '0' || *first > '9') return std::string(rest);  // no sign
  const auto [end, ec] = std::from_chars(first, rest.data() + rest.size(), expert);
  if (ec != std::errc() || end == first || end == rest.data() + rest.size() || *end != '.') {
    expert = -1;
    return std::string(rest);
  }
  return fmt::format("{}*{}", rest.substr(0, digits), rest.substr(end - rest.data()));
}

std::string FullName(int64_t layer, const std::string& key, int64_t expert = -1) {
  std::string k = key;
  if (const size_t star = k.find('*'); star != std::string::npos && expert >= 0)
    k.replace(star, 1, std::to_string(expert));
  return layer < 0 ? k : fmt::format("model.layers.{}.{}", layer, k);
}

class Checker {
 public:
  Checker(const HfConfig& c, const TensorTable& t) : c_(c), t_(t) {
    if (!c.complete) return;
    for (Expect e : ModelExpects(c)) {
      e.optional = e.optional || !c.known;  // another family: shapes of what is there
      model_.emplace(e.key, e);
    }
    if (!c.known) return;
    out_.mtp_absent = c.mtp_layers > 0 && !HasLayerFrom(c.layers);
    const int64_t mtp = out_.mtp_absent ? 0 : c.mtp_layers;
    for (int64_t l = 0; l < c.layers + mtp; ++l) {
      std::map<std::string, Expect, std::less<>> m;
      for (const Expect& e : LayerExpects(c, l)) m.emplace(e.key, e);
      layers_.push_back(std::move(m));
    }
  }

  void CheckTensors() {
    if (!c_.known) return;  // another family: every tensor is its own, none unrecognised
    for (const Tensor& t : t_.all()) {
      const size_t errors = errors_.size();
      if (const Expect* e = Lookup(t.name)) {
        Shape(t, e->shape, e->why);
      } else if (t.name.ends_with(".weight_scale_inv")) {
        CheckScale(t);
      } else if (errors_.size() == errors) {
        out_.unrecognised.push_back(t.name);
      }
    }
  }

  // Model-level tensors of a family import does not know: their shapes where present.
  void CheckGeneric() {
    if (c_.known) return;
    for (const auto& [key, e] : model_) {
      if (const Tensor* t = t_.Find(key)) Shape(*t, e.shape, e.why);
    }
  }

  void CheckPresent() {
    for (const auto& [key, e] : model_) {
      if (!e.optional && t_.Find(key) == nullptr) Missing(key, e);
    }
    for (int64_t l = 0; l < static_cast<int64_t>(layers_.size()); ++l) {
      for (const auto& [key, e] : layers_[l]) {
        if (e.optional) continue;
        const bool per_expert = key.find('*') != std::string::npos;
        for (int64_t x = 0; x < (per_expert ? c_.experts : 1) && !Full(); ++x) {
          const std::string name = FullName(l, key, per_expert ? x : -1);
          if (t_.Find(name) == nullptr) Missing(name, e);
        }
      }
    }
  }

  ConfigCheck Finish() {
    out_.unlisted = more_;
    out_.counting_stopped = Full();
    out_.problems = std::move(errors_);
    return std::move(out_);
  }

  ConfigCheck& out() { return out_; }

 private:
  // Problems past kMaxProblems are counted, not kept; past kStopCounting the checks stop (a
  // config that implies hundreds of millions of absent tensors).
  static constexpr size_t kMaxProblems = 1000;
  static constexpr size_t kStopCounting = 1'000'000;
  void Problem(std::string text) {
    if (errors_.size() < kMaxProblems) {
      errors_.push_back(std::move(text));
    } else {
      ++more_;
    }
  }
  [[nodiscard]] bool Full() const { return more_ >= kStopCounting; }

  // Does the checkpoint hold a tensor of layer `first` or a later one?
  bool HasLayerFrom(int64_t first) const {
    return std::any_of(t_.all().begin(), t_.all().end(), [&](const Tensor& t) {
      const auto split = SplitLayer(t.name);
      return split && split->first >= first;
    });
  }

  // The Expect of `name`, or nullptr. `report`: a layer or expert past the config's counts is
  // an error (said once, by CheckTensors; CheckScale looks up the weight beside a scale quietly).
  const Expect* Lookup(const std::string& name, bool report = true) {
    const auto split = SplitLayer(name);
    if (!split) {
      const auto it = model_.find(name);
      return it == model_.end() ? nullptr : &it->second;
    }
    const auto [layer, rest] = *split;
    if (layer >= static_cast<int64_t>(layers_.size())) {
      if (!report) return nullptr;
      Problem(fmt::format("{}: layer {} is past num_hidden_layers {}{}", Where(name), layer,
                          c_.layers, c_.mtp_layers ? fmt::format(" + {} MTP", c_.mtp_layers) : ""));
      return nullptr;
    }
    int64_t expert = -1;
    const std::string key = ExpertKey(rest, expert);
    const auto it = layers_[layer].find(key);
    if (it == layers_[layer].end()) return nullptr;
    if (expert >= c_.experts && report) {
      Problem(fmt::format("{}: expert {} is past the config's {} experts", Where(name), expert,
                          c_.experts));
    }
    return &it->second;
  }

  // FP8 block scales: [ceil(rows/block_rows), ceil(cols/block_cols)] of the weight beside it.
  void CheckScale(const Tensor& t) {
    constexpr std::string_view kScale = "_scale_inv";
    const std::string weight = t.name.substr(0, t.name.size() - kScale.size());
    const Tensor* w = t_.Find(weight);
    const Expect* e = w ? Lookup(weight, /*report=*/false) : nullptr;
    if (!w || !e) {
      out_.unrecognised.push_back(t.name);
      return;
    }
    if (w->shape.size() != 2) return;  // the weight's own check reports it
    Shape(t, BlockScaleShape(w->shape, c_),
          fmt::format("the blocks of {} {} at weight_block_size [{}, {}]", weight,
                      ShapeText(w->shape), c_.block_rows, c_.block_cols));
  }

  void Shape(const Tensor& t, const std::vector<int64_t>& want, const std::string& why) {
    if (t.shape == want) return;
    Problem(fmt::format("{} has shape {}; {} implies {} ({})", Where(t.name), ShapeText(t.shape),
                        Base(c_.path), ShapeText(want), why));
  }

  void Missing(const std::string& name, const Expect& e) {
    Problem(fmt::format("{} is missing; {} implies it ({} {})", name, Base(c_.path),
                        ShapeText(e.shape), e.why));
  }

  std::string Where(const std::string& name) const {
    const Tensor* t = t_.Find(name);
    return t ? fmt::format("{} (in {})", name, t->file) : name;
  }
  static std::string Base(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  }

  const HfConfig& c_;
  const TensorTable& t_;
  std::map<std::string, Expect, std::less<>> model_;
  std::vector<std::map<std::string, Expect, std::less<>>> layers_;
  std::vector<std::string> errors_;
  size_t more_ = 0;
  ConfigCheck out_;
};

}  // namespace

std::vector<int64_t> BlockScaleShape(const std::vector<int64_t>& weight, const HfConfig& c) {
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  return {ceil_div(weight[0], c.block_rows), ceil_div(weight[1], c.block_cols)};
}

std::vector<Expect> ModelExpects(const HfConfig& c) {
  std::vector<Expect> v;
  Add(v, "model.embed_tokens.weight", {c.vocab, c.hidden}, "vocab_size, hidden_size");
  Add(v, "model.norm.weight", {c.hidden}, "hidden_size");
  Add(v, "lm_head.weight", {c.vocab, c.hidden}, "vocab_size, hidden_size",
      c.tie_embeddings || !c.tie_given);
  return v;
}

std::vector<Expect> LayerExpects(const HfConfig& c, int64_t layer) {
  std::vector<Expect> v;
  AddNorms(v, c);
  if (c.mla()) {
    AddMla(v, c);
  } else {
    AddGqa(v, c);
  }
  const std::string& t = c.model_type;
  if (t == "gpt_oss") {
    AddGptOssExperts(v, c);
  } else if (t == "mixtral") {
    const std::string in = "intermediate_size, hidden_size";
    Add(v, "block_sparse_moe.gate.weight", {c.experts, c.hidden}, "num_local_experts, hidden_size");
    Add(v, "block_sparse_moe.experts.*.w1.weight", {c.intermediate, c.hidden}, in);
    Add(v, "block_sparse_moe.experts.*.w3.weight", {c.intermediate, c.hidden}, in);
    Add(v, "block_sparse_moe.experts.*.w2.weight", {c.hidden, c.intermediate},
        "hidden_size, intermediate_size");
  } else if (t == "qwen3_moe") {
    Add(v, "mlp.gate.weight", {c.experts, c.hidden}, "num_experts, hidden_size");
    AddGatedMlp(v, "mlp.experts.*.", c.hidden, c.moe_intermediate, "moe_intermediate_size");
  } else if (c.moe() && layer >= c.first_dense_layers) {
    AddDeepSeekMoe(v, c);
  } else {
    AddGatedMlp(v, "mlp.", c.hidden, c.intermediate, "intermediate_size");
  }
  if (layer >= c.layers) AddMtp(v, c);
  return v;
}

ConfigCheck CheckAgainstConfig(const HfConfig& c, const TensorTable& t) {
  Checker checker(c, t);
  checker.CheckTensors();
  checker.CheckGeneric();
  checker.CheckPresent();
  checker.out().lm_head_tied = t.Find("lm_head.weight") == nullptr;  // else CheckPresent says
  return checker.Finish();
}

std::string UnlistedText(const ConfigCheck& check) {
  if (check.unlisted == 0) return "";
  return fmt::format("... and {}{} more problems not listed",
                     check.counting_stopped ? "at least " : "", check.unlisted);
}

base::Status ProblemsStatus(const HfConfig& c, const ConfigCheck& check) {
  constexpr size_t kMaxErrors = 20;
  const std::vector<std::string>& problems = check.problems;
  const size_t total = problems.size() + check.unlisted;
  std::string message;
  for (size_t i = 0; i < problems.size() && i < kMaxErrors; ++i) message += problems[i] + "\n";
  if (total > kMaxErrors) message += fmt::format("... and {} more\n", total - kMaxErrors);
  if (!message.empty()) message.pop_back();
  return base::Status::Error(fmt::format("the tensors disagree with {} ({}{} problem{}):\n{}",
                                         c.path, check.counting_stopped ? "at least " : "", total,
                                         total == 1 ? "" : "s", message));
}

}  // namespace loadplan::importer
