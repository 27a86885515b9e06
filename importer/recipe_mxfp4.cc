// The MXFP4 recipes: gpt-oss's expert prep (examples/moe.h, the mxfp4_fc* kernels) and the
// dequantization of any `X_blocks`/`X_scales` expert pair to BF16 in transformers' layout.
#include <array>

#include <fmt/format.h>

#include "builders/moe.h"
#include "importer/recipes.h"

namespace loadplan::importer {
namespace {

using base::Dtype;

bool Is(const Tensor* t, Dtype dtype, size_t rank) {
  return t != nullptr && t->dtype == dtype && t->shape.size() == rank;
}

// Expert blocks [E, R, G, 16] U8 with scales [E, R, G] U8.
bool ExpertPair(const Tensor* blocks, const Tensor* scales) {
  return Is(blocks, Dtype::kU8, 4) && Is(scales, Dtype::kU8, 3) && blocks->shape[3] == 16 &&
         blocks->shape[0] == scales->shape[0] && blocks->shape[1] == scales->shape[1] &&
         blocks->shape[2] == scales->shape[2];
}

constexpr std::array<std::string_view, 6> kPrepKernels = {"mxfp4_fc1_weight", "mxfp4_fc1_scales",
                                                          "mxfp4_fc1_bias",   "mxfp4_fc2_weight",
                                                          "mxfp4_fc2_scales", "mxfp4_fc2_bias"};

}  // namespace

base::Result<RecipeOutcome> ApplyMxfp4GptOss(const HfConfig& c, const TensorTable& t,
                                             verifier::ManifestBuilder& b) {
  RecipeOutcome out;
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const std::string p = fmt::format("model.layers.{}.mlp.experts.", layer);
    const Tensor* fc1 = t.Find(p + "gate_up_proj_blocks");
    const Tensor* fc2 = t.Find(p + "down_proj_blocks");
    const bool whole = ExpertPair(fc1, t.Find(p + "gate_up_proj_scales")) &&
                       ExpertPair(fc2, t.Find(p + "down_proj_scales")) &&
                       t.Find(p + "gate_up_proj_bias") && t.Find(p + "down_proj_bias");
    if (!whole) {
      out.notes.push_back(fmt::format(
          "layer {}: not the six gpt-oss MXFP4 expert tensors ({}*): bound as stored", layer, p));
      continue;
    }
    // fc1 blocks [E, 2I, H/32, 16]: E experts, I intermediate, H hidden.
    builders::ExpertDims d;
    if (std::string err =
            builders::MakeExpertDims(fc1->shape[0], fc1->shape[2] * 32, fc1->shape[1] / 2, d);
        !err.empty()) {
      return base::Status::Error(fmt::format("{}: {}", fc1->name, err));
    }
    builders::AddExpertLayer(b, static_cast<int>(layer), p.substr(0, p.size() - 1), d,
                             /*exported=*/true);
    for (const char* f : {"gate_up_proj_blocks", "gate_up_proj_scales", "gate_up_proj_bias",
                          "down_proj_blocks", "down_proj_scales", "down_proj_bias"}) {
      out.claimed.insert(p + f);
    }
    out.carries += 6;
  }
  if (out.claimed.empty()) {
    return base::Status::Error(
        "recipe mxfp4-gpt-oss: no layer has gpt-oss MXFP4 expert tensors "
        "(model.layers.N.mlp.experts.gate_up_proj_blocks, ...)");
  }
  out.kernels.assign(kPrepKernels.begin(), kPrepKernels.end());
  return out;
}

base::Result<RecipeOutcome> ApplyMxfp4Bf16(const TensorTable& t, verifier::ManifestBuilder& b) {
  RecipeOutcome out;
  constexpr std::string_view kBlocks = "_blocks";
  for (const Tensor& blocks : t.all()) {
    if (!blocks.name.ends_with(kBlocks)) continue;
    const std::string x = blocks.name.substr(0, blocks.name.size() - kBlocks.size());
    const Tensor* scales = t.Find(x + "_scales");
    if (!ExpertPair(&blocks, scales)) {
      out.notes.push_back(fmt::format(
          "{}: no matching {}_scales of [experts, rows, groups] U8 beside [experts, rows, groups, "
          "16] U8 blocks: bound as stored",
          blocks.name, x));
      continue;
    }
    if (t.Find(x) != nullptr) {
      out.notes.push_back(
          fmt::format("{}: the checkpoint already has a tensor named {}: bound as "
                      "stored",
                      blocks.name, x));
      continue;
    }
    const int64_t e = blocks.shape[0], rows = blocks.shape[1], cols = blocks.shape[2] * 32;
    b.Checkpoint(blocks.name, blocks.name, Dtype::kU8, {e, rows, cols / 32, 16},
                 {.encoding = "fp4_e2m1x2"});
    b.Checkpoint(scales->name, scales->name, Dtype::kU8, {e, rows, cols / 32},
                 {.encoding = "e8m0"});
    b.Carry(x, Dtype::kBF16, {e, cols, rows}, {.exported = true});
    b.AddDerive("derive." + x)
        .Call("mxfp4_experts_bf16",
              {{"blocks", blocks.name},
               {"scales", scales->name},
               {"dst", x},
               {"experts", e},
               {"rows", rows},
               {"cols", cols}},
              {e});
    out.claimed.insert(blocks.name);
    out.claimed.insert(scales->name);
    ++out.carries;
  }
  if (out.carries == 0) {
    return base::Status::Error(
        "recipe mxfp4-bf16: no MXFP4 expert pair (X_blocks [E, rows, groups, 16] U8 with "
        "X_scales [E, rows, groups] U8) in the checkpoint");
  }
  out.kernels = {"mxfp4_experts_bf16"};
  return out;
}

}  // namespace loadplan::importer
