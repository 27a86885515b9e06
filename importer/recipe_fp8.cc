// The FP8 recipes: `X.weight` F8_E4M3 [rows, cols] with `X.weight_scale_inv` F32 block scales,
// kept as stored (fp8-keep) or dequantized to a BF16 carry named `X.weight` (fp8-bf16).
#include <fmt/format.h>

#include "importer/families.h"
#include "importer/recipes.h"

namespace loadplan::importer {
namespace {

using base::Dtype;

// `weight` as a BF16 carry derived from its FP8 source and block scales (fp8_block_bf16).
void AddDequant(const HfConfig& c, const std::string& weight, const std::string& scales,
                int64_t rows, int64_t cols, const std::vector<int64_t>& scale_shape,
                verifier::ManifestBuilder& b) {
  const std::string src = weight + ".fp8";
  b.Checkpoint(src, weight, Dtype::kF8E4M3, {rows, cols});
  b.Checkpoint(scales, scales, Dtype::kF32, {scale_shape[0], scale_shape[1]});
  b.Carry(weight, Dtype::kBF16, {rows, cols}, {.exported = true});
  b.AddDerive("derive." + weight)
      .Call("fp8_block_bf16",
            {{"src", src},
             {"scales", scales},
             {"dst", weight},
             {"rows", rows},
             {"cols", cols},
             {"block_rows", c.block_rows},
             {"block_cols", c.block_cols}},
            {scale_shape[0]});
}

}  // namespace

base::Result<RecipeOutcome> ApplyFp8(const HfConfig& c, const TensorTable& t, bool to_bf16,
                                     verifier::ManifestBuilder& b) {
  RecipeOutcome out;
  size_t pairs = 0;  // FP8 weights with their scales
  const std::string name = to_bf16 ? "fp8-bf16" : "fp8-keep";
  constexpr std::string_view kScale = "_scale_inv";
  for (const Tensor& s : t.all()) {
    if (!s.name.ends_with(".weight_scale_inv")) continue;
    const std::string weight = s.name.substr(0, s.name.size() - kScale.size());
    const Tensor* w = t.Find(weight);
    if (w == nullptr || w->dtype != Dtype::kF8E4M3 || w->shape.size() != 2) {
      out.notes.push_back(
          fmt::format("{}: no F8_E4M3 matrix {} beside it: bound as stored", s.name, weight));
      continue;
    }
    const int64_t rows = w->shape[0], cols = w->shape[1];
    const std::vector<int64_t> want = BlockScaleShape(w->shape, c);
    if (s.dtype != Dtype::kF32 || s.shape != want) {
      return base::Status::Error(fmt::format(
          "recipe {}: {} (in {}) is {} {}; weight_block_size [{}, {}] of {} {} needs F32 {}", name,
          s.name, s.file, base::DtypeName(s.dtype), ShapeText(s.shape), c.block_rows, c.block_cols,
          weight, ShapeText(w->shape), ShapeText(want)));
    }
    ++pairs;
    if (!to_bf16) continue;  // both stay weights, bound as stored
    AddDequant(c, weight, s.name, rows, cols, want, b);
    ++out.carries;
    out.claimed.insert(weight);
    out.claimed.insert(s.name);
  }
  if (pairs == 0) {
    return base::Status::Error(fmt::format(
        "recipe {}: no FP8 block-scaled weight (X.weight F8_E4M3 with X.weight_scale_inv F32) in "
        "the checkpoint",
        name));
  }
  if (!to_bf16) {
    out.notes.push_back(fmt::format("{} FP8 weights kept with their block scales", pairs));
  } else {
    out.kernels = {"fp8_block_bf16"};
  }
  return out;
}

}  // namespace loadplan::importer
