// gpt-oss-120b: the published checkpoint's tensors, MXFP4 expert prep as derive
// programs, and a graph-captured decode program over every layer.
#include <fmt/format.h>

#include "examples/examples.h"
#include "builders/kernels.h"
#include "builders/moe.h"

namespace loadplan::examples {
namespace {

using base::Dtype;
using builders::AddExpertLayer;
using builders::AddMoeCalls;
using builders::AddRouterWeights;
using builders::AddStandardKernels;
using builders::ExpertDims;
using builders::LayerTensor;
using builders::MakeExpertDims;
using verifier::ManifestBuilder;
using verifier::ProgramBuilder;

constexpr const char* kTokens = "batch";  // decode: one new token per sequence

std::string Prefix(int layer) { return fmt::format("l{}", layer); }

// Gpt-oss alternates sliding-window (even layers) and full attention: a sliding
// layer's KV cache holds at most `sliding_window` positions.
std::string KvSlots(const GptOssParams& p, int layer) {
  return layer % 2 == 0 ? fmt::format("min(ctx, {})", p.sliding_window) : "ctx";
}

void AddAttentionLayer(ManifestBuilder& b, int layer, const GptOssParams& p) {
  const std::string l = Prefix(layer);
  const int64_t q = p.heads * p.head_dim, kv = p.kv_heads * p.head_dim;
  const auto bf16 = [&](const char* name, const char* suffix, verifier::Dims shape) {
    b.Checkpoint(fmt::format("{}.{}", l, name), LayerTensor(layer, suffix), Dtype::kBF16,
                 std::move(shape));
  };
  bf16("attn_norm", "input_layernorm.weight", {p.hidden});
  bf16("mlp_norm", "post_attention_layernorm.weight", {p.hidden});
  bf16("q_w", "self_attn.q_proj.weight", {q, p.hidden});
  bf16("q_b", "self_attn.q_proj.bias", {q});
  bf16("k_w", "self_attn.k_proj.weight", {kv, p.hidden});
  bf16("k_b", "self_attn.k_proj.bias", {kv});
  bf16("v_w", "self_attn.v_proj.weight", {kv, p.hidden});
  bf16("v_b", "self_attn.v_proj.bias", {kv});
  bf16("o_w", "self_attn.o_proj.weight", {p.hidden, q});
  bf16("o_b", "self_attn.o_proj.bias", {p.hidden});
  bf16("sinks", "self_attn.sinks", {p.heads});
  b.State(l + ".kv", Dtype::kBF16, {"batch", KvSlots(p, layer), 2, p.kv_heads, p.head_dim});
}

void AddAttentionCall(ProgramBuilder& prog, int layer, const GptOssParams& p) {
  const std::string l = Prefix(layer);
  verifier::Args args = {{"x", "normed"},
                         {"residual", "hidden"},
                         {"out", "hidden"},
                         {"positions", "positions"},
                         {"kv", l + ".kv"},
                         {"tokens", kTokens},
                         {"slots", KvSlots(p, layer)},
                         {"window", layer % 2 == 0 ? p.sliding_window : 0},
                         {"hidden", p.hidden},
                         {"heads", p.heads},
                         {"kv_heads", p.kv_heads},
                         {"head_dim", p.head_dim}};
  for (const char* w : {"q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b", "sinks"}) {
    args.emplace_back(w, fmt::format("{}.{}", l, w));
  }
  prog.Call("attention", std::move(args), {kTokens, p.heads});
}

void AddNormCall(ProgramBuilder& prog, const std::string& x, const std::string& weight,
                 const GptOssParams& p) {
  prog.Call(
      "rmsnorm",
      {{"x", x}, {"weight", weight}, {"out", "normed"}, {"tokens", kTokens}, {"hidden", p.hidden}},
      {kTokens});
}

void AddModelBuffers(ManifestBuilder& b, const GptOssParams& p) {
  b.Checkpoint("embed", "model.embed_tokens.weight", Dtype::kBF16, {p.vocab, p.hidden});
  b.Checkpoint("lm_head", "lm_head.weight", Dtype::kBF16, {p.vocab, p.hidden});
  b.Checkpoint("norm", "model.norm.weight", Dtype::kBF16, {p.hidden});
  b.Input("tokens", Dtype::kI32, {"batch"});
  b.Input("positions", Dtype::kI32, {"batch"});
  b.Output("logits", Dtype::kF32, {"batch", p.vocab}, {.exported = true});
  b.Scratch("hidden", Dtype::kBF16, {"batch", p.hidden});
  b.Scratch("normed", Dtype::kBF16, {"batch", p.hidden});
  b.Scratch("topk_ids", Dtype::kI32, {"batch", p.top_k});
  b.Scratch("topk_weights", Dtype::kF32, {"batch", p.top_k});
}

void AddDecode(ManifestBuilder& b, const GptOssParams& p, const ExpertDims& d) {
  ProgramBuilder& prog = b.AddProgram("decode").Batch("batch").Graph();
  prog.Call("embedding",
            {{"table", "embed"},
             {"ids", "tokens"},
             {"out", "hidden"},
             {"tokens", kTokens},
             {"vocab", p.vocab},
             {"hidden", p.hidden}},
            {kTokens});
  for (int layer = 0; layer < p.layers; ++layer) {
    const std::string l = Prefix(layer);
    AddNormCall(prog, "hidden", l + ".attn_norm", p);
    AddAttentionCall(prog, layer, p);
    AddNormCall(prog, "hidden", l + ".mlp_norm", p);
    AddMoeCalls(prog,
                {.prefix = l,
                 .x = "normed",
                 .residual = "hidden",
                 .out = "hidden",
                 .ids = "topk_ids",
                 .weights = "topk_weights",
                 .tokens = kTokens,
                 .top_k = p.top_k},
                d);
  }
  AddNormCall(prog, "hidden", "norm", p);
  prog.Call("lm_head",
            {{"x", "normed"},
             {"weight", "lm_head"},
             {"logits", "logits"},
             {"tokens", kTokens},
             {"hidden", p.hidden},
             {"vocab", p.vocab}},
            {kTokens});
}

}  // namespace

verifier::BuildResult GptOss(const GptOssParams& p) {
  ExpertDims d;
  if (std::string err = MakeExpertDims(p.experts, p.hidden, p.intermediate, d); !err.empty()) {
    return {.errors = {err}};
  }
  ManifestBuilder b(p.name);
  b.Var("batch", 1, p.batch_max).Var("ctx", 1, p.ctx_max).Load(p.lanes, p.prefetch);
  AddStandardKernels(b, {"mxfp4_fc1_weight", "mxfp4_fc1_scales", "mxfp4_fc1_bias",
                         "mxfp4_fc2_weight", "mxfp4_fc2_scales", "mxfp4_fc2_bias", "embedding",
                         "rmsnorm", "attention", "router", "moe", "lm_head"});
  AddModelBuffers(b, p);
  for (int layer = 0; layer < p.layers; ++layer) {
    AddAttentionLayer(b, layer, p);
    AddRouterWeights(b, layer, Prefix(layer), d);
    AddExpertLayer(b, layer, Prefix(layer), d);
  }
  AddDecode(b, p, d);
  return b.Build();
}

}  // namespace loadplan::examples
