// A K3-class pipeline stage: ~188 GB of MXFP4 experts staged onto one 288 GB
// device. Only the MoE half of each layer is modelled (see README).
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

constexpr const char* kTokens = "batch";

void AddStageBuffers(ManifestBuilder& b, const K3StageParams& p) {
  b.Input("hidden_in", Dtype::kBF16, {"batch", p.hidden});
  b.Output("hidden_out", Dtype::kBF16, {"batch", p.hidden}, {.exported = true});
  b.Scratch("hidden", Dtype::kBF16, {"batch", p.hidden});
  b.Scratch("normed", Dtype::kBF16, {"batch", p.hidden});
  b.Scratch("topk_ids", Dtype::kI32, {"batch", p.top_k});
  b.Scratch("topk_weights", Dtype::kF32, {"batch", p.top_k});
}

// The residual stream enters in hidden_in, runs in hidden and leaves in hidden_out.
void AddDecode(ManifestBuilder& b, const K3StageParams& p, const ExpertDims& d) {
  verifier::ProgramBuilder& prog = b.AddProgram("decode").Batch("batch").Graph();
  for (int i = 0; i < p.layers; ++i) {
    const std::string l = fmt::format("l{}", p.first_layer + i);
    const std::string in = i == 0 ? "hidden_in" : "hidden";
    const std::string out = i + 1 == p.layers ? "hidden_out" : "hidden";
    prog.Call("rmsnorm",
              {{"x", in},
               {"weight", l + ".mlp_norm"},
               {"out", "normed"},
               {"tokens", kTokens},
               {"hidden", p.hidden}},
              {kTokens});
    AddMoeCalls(prog,
                {.prefix = l,
                 .x = "normed",
                 .residual = in,
                 .out = out,
                 .ids = "topk_ids",
                 .weights = "topk_weights",
                 .tokens = kTokens,
                 .top_k = p.top_k},
                d);
  }
}

}  // namespace

verifier::BuildResult K3Stage(const K3StageParams& p) {
  ExpertDims d;
  if (std::string err = MakeExpertDims(p.experts, p.hidden, p.intermediate, d); !err.empty()) {
    return {.errors = {err}};
  }
  if (p.layers < 1 || p.first_layer < 0)
    return {.errors = {"k3-stage: need layers >= 1 and first_layer >= 0"}};
  ManifestBuilder b(p.name);
  b.Var("batch", 1, p.batch_max).Load(p.lanes, p.prefetch);
  AddStandardKernels(b,
                     {"mxfp4_fc1_weight", "mxfp4_fc1_scales", "mxfp4_fc1_bias", "mxfp4_fc2_weight",
                      "mxfp4_fc2_scales", "mxfp4_fc2_bias", "rmsnorm", "router", "moe"});
  AddStageBuffers(b, p);
  for (int i = 0; i < p.layers; ++i) {
    const int layer = p.first_layer + i;
    const std::string l = fmt::format("l{}", layer);
    b.Checkpoint(l + ".mlp_norm", LayerTensor(layer, "post_attention_layernorm.weight"),
                 Dtype::kBF16, {p.hidden});
    AddRouterWeights(b, layer, l, d);
    AddExpertLayer(b, layer, l, d);
  }
  AddDecode(b, p, d);
  return b.Build();
}

}  // namespace loadplan::examples
