// transformers' load-time conversions as stacked bindings, and its renames.
#include "importer/layouts.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace loadplan::importer {
namespace {

// Written from transformers 5.17's conversion_mapping.py (_build_checkpoint_conversion_mapping
// and _MODEL_TO_CONVERSION_PATTERN): the patterns that fuse or rename the weights of causal
// language models. MergeModulelist(dim=0) then Concatenate(dim=1) of [I, H] experts is, per
// expert, the parts one after another: a stack of the parts in index order.
std::vector<LayoutConversion> Build() {
  const LayoutMerge gate_up{{"mlp.experts.*.gate_proj.weight", "mlp.experts.*.up_proj.weight"},
                            "mlp.experts.gate_up_proj"};
  const LayoutMerge down{{"mlp.experts.*.down_proj.weight"}, "mlp.experts.down_proj"};
  const LayoutMerge w13{{".experts.*.w1.weight", ".experts.*.w3.weight"}, ".experts.gate_up_proj"};
  const LayoutMerge w2{{".experts.*.w2.weight"}, ".experts.down_proj"};
  const LayoutRename moe_to_mlp{".block_sparse_moe.", ".mlp."};
  return {
      {"qwen2_moe",
       {"afmoe",          "cohere2_moe",      "deepseek_v2", "deepseek_v3",   "deepseek_v32",
        "dots1",          "flex_olmo",        "glm4_moe",    "glm4_moe_lite", "glm_moe_dsa",
        "hunyuan_v1_moe", "longcat_flash",    "mellum",      "olmoe",         "qwen2_moe",
        "qwen3_5_moe",    "qwen3_5_moe_text", "qwen3_moe",   "qwen3_next",    "solar_open"},
       {},
       {gate_up, down}},
      {"ernie4_5_moe",
       {"ernie4_5_moe"},
       {{"mlp.moe_statics.e_score_correction_bias",
         "mlp.gate.moe_statics.e_score_correction_bias"}},
       {gate_up, down}},
      {"exaone_moe",
       {"exaone_moe"},
       {{"mlp.e_score_correction_bias", "mlp.gate.e_score_correction_bias"}},
       {gate_up, down}},
      {"mimo_v2_flash",
       {"mimo_v2_flash"},
       {{"self_attn.attention_sink_bias", "self_attn.sinks"}},
       {gate_up, down}},
      {"hy_v3",
       {"hy_v3"},
       {{"mlp.router.gate.weight", "mlp.gate.weight"},
        {"mlp.expert_bias", "mlp.e_score_correction_bias"},
        {"mlp.shared_mlp.", "mlp.shared_experts."}},
       {gate_up, down}},
      {"laguna",
       {"laguna"},
       {{"mlp.experts.e_score_correction_bias", "mlp.gate.e_score_correction_bias"},
        {"mlp.shared_expert.", "mlp.shared_experts."}},
       {gate_up, down}},
      {"axk1", {"axk1"}, {{"post_mlp_layernorm", "mlp.post_mlp_layernorm"}}, {gate_up, down}},
      {"axk2",
       {"axk2"},
       {{"W_down", "mlp.fc1"},
        {"W_up", "mlp.fc2"},
        {"self_attn.q_b_proj.", "self_attn.q_gate_proj."}},
       {gate_up, down}},
      {"hy_v4",
       {"hy_v4"},
       {{".hc_pre.hc_", ".hc_"},
        {".learnable_sink_param$", ".sinks"},
        {".linear_gate", ".gate_proj"},
        {".hc_attn_layer.hc_fn", ".attn_hc.fn"},
        {".hc_attn_layer.hc_base", ".attn_hc.base"},
        {".hc_attn_layer.hc_scale", ".attn_hc.scale"},
        {".hc_mlp_layer.hc_fn", ".ffn_hc.fn"},
        {".hc_mlp_layer.hc_base", ".ffn_hc.base"},
        {".hc_mlp_layer.hc_scale", ".ffn_hc.scale"},
        {".hc_head_fn", ".hc_fn"},
        {".hc_head_base", ".hc_base"},
        {".hc_head_scale", ".hc_scale"}},
       {}},
      {"hrm_text",
       {"hrm_text"},
       {{".attn.o_proj.", ".self_attn.o_proj."}},
       {},
       {{"mlp.gate_up_proj.weight", {"mlp.gate_proj.weight", "mlp.up_proj.weight"}},
        {"attn.gqkv_proj.weight",
         {"self_attn.gate_proj.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
          "self_attn.v_proj.weight"}}}},
      {"mixtral", {"minimax", "minimax_m2", "mixtral"}, {moe_to_mlp}, {w13, w2}},
      {"phimoe", {"phimoe"}, {moe_to_mlp, {".gate.weight", ".router.weight"}}, {w13, w2}},
      {"kimi_linear",
       {"kimi_linear"},
       {{"self_attn.f_a_proj.", "self_attn.forget_gate.f_a_proj."},
        {"self_attn.f_b_proj.", "self_attn.forget_gate.f_b_proj."},
        {"self_attn.dt_bias", "self_attn.forget_gate.dt_bias"},
        {"self_attn.A_log", "self_attn.forget_gate.A_log"},
        moe_to_mlp},
       {{{"self_attn.q_conv1d.weight", "self_attn.k_conv1d.weight", "self_attn.v_conv1d.weight"},
         "self_attn.conv1d.weight"},
        w13,
        w2}},
      {"olmo_hybrid",
       {"olmo_hybrid"},
       {{"attention_layer_norm", "input_layernorm"},
        {"feedforward_layer_norm", "post_attention_layernorm"}},
       {{{"linear_attn.q_conv1d.weight", "linear_attn.k_conv1d.weight",
          "linear_attn.v_conv1d.weight"},
         "linear_attn.conv1d.weight"}}},
      {"jamba",
       {"jamba"},
       {},
       {{{"feed_forward.experts.*.gate_proj.weight", "feed_forward.experts.*.up_proj.weight"},
         "feed_forward.experts.gate_up_proj"},
        {{"feed_forward.experts.*.down_proj.weight"}, "feed_forward.experts.down_proj"}}},
      {"lfm2_moe",
       {"lfm2_moe"},
       {},
       {{{"feed_forward.experts.*.w1.weight", "feed_forward.experts.*.w3.weight"},
         "feed_forward.experts.gate_up_proj"},
        {{"feed_forward.experts.*.w2.weight"}, "feed_forward.experts.down_proj"}}},
      {"nemotron_h",
       {"nemotron_h"},
       {{"^backbone.", "model."}},
       {{{"mixer.experts.*.up_proj.weight"}, "mixer.experts.up_proj"},
        {{"mixer.experts.*.down_proj.weight"}, "mixer.experts.down_proj"}}},
      {"granitemoe",
       {"granitemoe", "granitemoehybrid", "granitemoeshared"},
       {{"block_sparse_moe.input_linear.weight", "block_sparse_moe.experts.gate_up_proj"},
        {"block_sparse_moe.output_linear.weight", "block_sparse_moe.experts.down_proj"},
        {"block_sparse_moe.router.layer.weight", "block_sparse_moe.router.weight"}},
       {}},
      {"GPTNeoXForCausalLM", {"gpt_neox"}, {{"^embed_out.", "lm_head."}}, {}},
      {"fuyu",
       {"fuyu"},
       {{"^language_model.lm_head", "lm_head"},
        {"^language_model.model.", "model.language_model."},  // the text model's own prefix
        {"^language_model", "model.language_model"},
        {"^vision_embed_tokens", "model.vision_embed_tokens"}},
       {}},
  };
}

// "model.layers.3.mlp.experts.17.up_proj.weight" against "mlp.experts.*.up_proj.weight":
// {prefix "model.layers.3.", index 17}.
struct Match {
  std::string prefix;
  int64_t index = 0;
};
std::optional<Match> MatchTail(std::string_view name, std::string_view pattern) {
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) {  // a concatenation of named siblings: index 0
    if (name.size() <= pattern.size() || !name.ends_with(pattern)) return std::nullopt;
    return Match{.prefix = std::string(name.substr(0, name.size() - pattern.size()))};
  }
  const std::string_view head = pattern.substr(0, star), tail = pattern.substr(star + 1);
  if (name.size() < head.size() + tail.size() + 1 || !name.ends_with(tail)) return std::nullopt;
  const std::string_view rest = name.substr(0, name.size() - tail.size());  // ...head + digits
  size_t digits = rest.size();
  while (digits > 0 && rest[digits - 1] >= '0' && rest[digits - 1] <= '9') --digits;
  if (digits == rest.size() || !rest.substr(0, digits).ends_with(head)) return std::nullopt;
  if (rest[digits] == '0' && rest.size() - digits > 1) return std::nullopt;  // "01": not an index
  Match m{.prefix = std::string(rest.substr(0, digits - head.size()))};
  const auto [end, ec] = std::from_chars(rest.data() + digits, rest.data() + rest.size(), m.index);
  if (ec != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return m;
}

// The tensors of one stack: [index][part], null where absent.
using Group = std::map<int64_t, std::vector<const Tensor*>>;

std::map<std::string, Group> GroupByPrefix(const LayoutMerge& merge, const TensorTable& t,
                                           const std::set<std::string>& taken) {
  std::map<std::string, Group> groups;
  for (const Tensor& x : t.all()) {
    if (taken.contains(x.name)) continue;
    for (size_t p = 0; p < merge.parts.size(); ++p) {
      const std::optional<Match> m = MatchTail(x.name, merge.parts[p]);
      if (!m) continue;
      auto& slot = groups[m->prefix][m->index];
      slot.resize(merge.parts.size(), nullptr);
      slot[p] = &x;
    }
  }
  return groups;
}

// Why `g` cannot be one stack ("" when it can): an index or a part missing, a dtype that
// differs, a part whose shape differs from the same part at index 0, parts whose trailing
// dims differ.
std::string Unstackable(const LayoutMerge& merge, const Group& g) {
  const std::vector<const Tensor*>& zero = g.begin()->second;
  const Tensor* first = nullptr;
  int64_t expect = 0;
  for (const auto& [index, parts] : g) {
    if (index != expect) return fmt::format("index {} is absent", expect);
    ++expect;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (parts[p] == nullptr) return fmt::format("index {} has no {}", index, merge.parts[p]);
      const Tensor& x = *parts[p];
      if (!first) first = &x;
      const Tensor* same = zero[p] != nullptr ? zero[p] : &x;
      if (x.dtype != first->dtype || x.shape.empty() || x.shape != same->shape ||
          x.shape.size() != first->shape.size() ||
          !std::equal(x.shape.begin() + 1, x.shape.end(), first->shape.begin() + 1)) {
        return fmt::format("{} {} {} does not stack with {} {} {}", x.name,
                           base::DtypeName(x.dtype), ShapeText(x.shape), first->name,
                           base::DtypeName(first->dtype), ShapeText(first->shape));
      }
    }
  }
  return "";
}

// [N, sum of the parts' first dims, the rest of the parts' dims]; without N for a merge of
// named siblings (no index).
verifier::Dims StackShape(const LayoutMerge& merge, const Group& g) {
  const std::vector<const Tensor*>& parts = g.begin()->second;
  int64_t rows = 0;
  for (const Tensor* p : parts) rows += p->shape[0];
  verifier::Dims d;
  if (merge.parts.front().find('*') != std::string_view::npos)
    d.push_back(static_cast<int64_t>(g.size()));
  d.push_back(rows);
  for (size_t i = 1; i < parts.front()->shape.size(); ++i) d.push_back(parts.front()->shape[i]);
  return d;
}

}  // namespace

const std::vector<LayoutConversion>& LayoutConversions() {
  static const std::vector<LayoutConversion> kTable = Build();
  return kTable;
}

const LayoutConversion* ConversionOf(std::string_view model_type) {
  for (const LayoutConversion& c : LayoutConversions()) {
    if (std::find(c.model_types.begin(), c.model_types.end(), model_type) != c.model_types.end())
      return &c;
  }
  return nullptr;
}

bool MatchesMerge(const LayoutConversion& conversion, std::string_view name) {
  for (const LayoutMerge& merge : conversion.merges) {
    for (std::string_view part : merge.parts) {
      if (MatchTail(name, part)) return true;
    }
  }
  return false;
}

std::string TransformersName(const LayoutConversion& conversion, std::string name) {
  for (const LayoutRename& r : conversion.renames) {
    if (r.from.starts_with('^')) {  // anchored at the start of the name
      const std::string_view from = r.from.substr(1);
      if (name.starts_with(from)) name.replace(0, from.size(), r.to);
      continue;
    }
    if (r.from.ends_with('$')) {  // anchored at the end of the name
      const std::string_view from = r.from.substr(0, r.from.size() - 1);
      if (name.ends_with(from)) name.replace(name.size() - from.size(), from.size(), r.to);
      continue;
    }
    for (size_t at = name.find(r.from); at != std::string::npos;
         at = name.find(r.from, at + r.to.size())) {
      name.replace(at, r.from.size(), r.to);
    }
  }
  return name;
}

LayoutOutcome AddLayoutStacks(const LayoutConversion& conversion, const TensorTable& t,
                              const std::set<std::string>& taken, verifier::ManifestBuilder& b) {
  LayoutOutcome out;
  for (const LayoutMerge& merge : conversion.merges) {
    for (const auto& [prefix, group] : GroupByPrefix(merge, t, taken)) {
      const std::string target = TransformersName(conversion, prefix + std::string(merge.target));
      if (const std::string why = Unstackable(merge, group); !why.empty()) {
        out.notes.push_back(
            fmt::format("{} is not stacked ({}): its tensors are bound as stored", target, why));
        continue;
      }
      std::vector<std::string> names;
      for (const auto& [index, parts] : group) {
        for (const Tensor* p : parts) {
          names.push_back(p->name);
          out.claimed.insert(p->name);
        }
      }
      out.targets.push_back(target);
      b.CheckpointParts(target, std::move(names), group.begin()->second.front()->dtype,
                        StackShape(merge, group));
      ++out.stacks;
    }
  }
  return out;
}

void AddLayoutSplits(const LayoutConversion& conversion, const TensorTable& t,
                     const std::set<std::string>& taken, verifier::ManifestBuilder& b,
                     LayoutOutcome& out) {
  for (const LayoutSplit& split : conversion.splits) {
    for (const Tensor& x : t.all()) {
      if (taken.contains(x.name) || !x.name.ends_with(split.source) ||
          x.name.size() == split.source.size())
        continue;
      const std::string prefix = x.name.substr(0, x.name.size() - split.source.size());
      const uint64_t n = split.targets.size();
      if (x.shape.empty() || x.shape[0] % static_cast<int64_t>(n) != 0) {
        out.notes.push_back(
            fmt::format("{} {} is not split ({} rows into {} equal parts): it is "
                        "bound as stored",
                        x.name, ShapeText(x.shape), x.shape.empty() ? 0 : x.shape[0], n));
        continue;
      }
      const int64_t rows = x.shape[0] / static_cast<int64_t>(n);
      for (uint64_t i = 0; i < n; ++i) {
        verifier::Dims shape(x.shape.begin(), x.shape.end());
        shape[0] = rows;
        const std::string target =
            TransformersName(conversion, prefix + std::string(split.targets[i]));
        b.Checkpoint(target, x.name, x.dtype, shape,
                     {.slice = verifier::TensorSlice{.dim = 0,
                                                     .start = i * static_cast<uint64_t>(rows),
                                                     .length = static_cast<uint64_t>(rows),
                                                     .extent = static_cast<uint64_t>(x.shape[0])}});
        out.targets.push_back(target);
        ++out.splits;
      }
      out.claimed.insert(x.name);
    }
  }
}

}  // namespace loadplan::importer
