// Recipes: which checkpoint tensors become sources, what derive program turns them into the
// carries kernels read, chosen by the config's quantization_config and the tensor names
// (docs/import.md "Recipes"). Every kernel a recipe calls is a kernel-registry kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "importer/hf_config.h"
#include "importer/tensors.h"
#include "verifier/builder.h"

namespace loadplan::importer {

enum class Recipe : uint8_t {
  kAuto,         // chosen from quantization_config (ChooseRecipe)
  kNone,         // every tensor a weight, as stored
  kMxfp4GptOss,  // gpt-oss MXFP4 experts into the grouped GEMM's layout (the mxfp4_fc* kernels)
  kMxfp4Bf16,    // MXFP4 experts dequantized to BF16 in transformers' layout
  kFp8Keep,      // FP8 block-scaled weights kept as FP8 with their scales
  kFp8Bf16,      // FP8 block-scaled weights dequantized to BF16
};
std::optional<Recipe> ParseRecipe(std::string_view name);  // "auto", "mxfp4-gpt-oss", ...
std::string_view RecipeName(Recipe r);
std::vector<std::string_view> RecipeNames();  // every name ParseRecipe accepts

// kAuto's choice: mxfp4 -> kMxfp4GptOss for gpt_oss, kMxfp4Bf16 otherwise; fp8 -> kFp8Keep;
// anything else kNone. For transformers' layout (`bf16`): the BF16 recipes (kMxfp4Bf16,
// kFp8Bf16), the weights transformers' classes hold without a quantizer.
Recipe ChooseRecipe(const HfConfig& c, bool bf16 = false);

struct RecipeOutcome {
  std::set<std::string> claimed;     // tensors the recipe bound (as sources or weights)
  size_t carries = 0;                // derived buffers it added
  std::vector<std::string> kernels;  // registry kernels its derive programs call
  std::vector<std::string> notes;    // what it could not place, and why
};
// Adds the recipe's buffers and derive programs to `b`. Derived carries are exported (the
// caller reads them; no serving program does). kInvalidInput when a named recipe finds nothing
// to do in this checkpoint, or its tensors have shapes the recipe cannot take.
base::Result<RecipeOutcome> ApplyRecipe(Recipe r, const HfConfig& c, const TensorTable& t,
                                        verifier::ManifestBuilder& b);

// The recipes, one file each.
base::Result<RecipeOutcome> ApplyMxfp4GptOss(const HfConfig& c, const TensorTable& t,
                                             verifier::ManifestBuilder& b);
base::Result<RecipeOutcome> ApplyMxfp4Bf16(const TensorTable& t, verifier::ManifestBuilder& b);
base::Result<RecipeOutcome> ApplyFp8(const HfConfig& c, const TensorTable& t, bool to_bf16,
                                     verifier::ManifestBuilder& b);

}  // namespace loadplan::importer
