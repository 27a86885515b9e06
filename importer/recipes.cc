// Recipe names, the automatic choice, and dispatch.
#include "importer/recipes.h"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace loadplan::importer {
namespace {

constexpr std::array<std::pair<Recipe, std::string_view>, 6> kNames = {{
    {Recipe::kAuto, "auto"},
    {Recipe::kNone, "none"},
    {Recipe::kMxfp4GptOss, "mxfp4-gpt-oss"},
    {Recipe::kMxfp4Bf16, "mxfp4-bf16"},
    {Recipe::kFp8Keep, "fp8-keep"},
    {Recipe::kFp8Bf16, "fp8-bf16"},
}};

}  // namespace

std::optional<Recipe> ParseRecipe(std::string_view name) {
  for (const auto& [r, n] : kNames) {
    if (n == name) return r;
  }
  return std::nullopt;
}

std::string_view RecipeName(Recipe r) {
  for (const auto& [rr, n] : kNames) {
    if (rr == r) return n;
  }
  return "?";
}

std::vector<std::string_view> RecipeNames() {
  std::vector<std::string_view> v;
  for (const auto& kv : kNames) v.push_back(kv.second);
  return v;
}

Recipe ChooseRecipe(const HfConfig& c, bool bf16) {
  if (c.quant_method == "mxfp4")
    return c.model_type == "gpt_oss" && !bf16 ? Recipe::kMxfp4GptOss : Recipe::kMxfp4Bf16;
  if (c.quant_method == "fp8") return bf16 ? Recipe::kFp8Bf16 : Recipe::kFp8Keep;
  return Recipe::kNone;
}

base::Result<RecipeOutcome> ApplyRecipe(Recipe r, const HfConfig& c, const TensorTable& t,
                                        verifier::ManifestBuilder& b) {
  switch (r == Recipe::kAuto ? ChooseRecipe(c) : r) {
    case Recipe::kAuto:
    case Recipe::kNone: return RecipeOutcome{};
    case Recipe::kMxfp4GptOss: return ApplyMxfp4GptOss(c, t, b);
    case Recipe::kMxfp4Bf16: return ApplyMxfp4Bf16(t, b);
    case Recipe::kFp8Keep: return ApplyFp8(c, t, /*to_bf16=*/false, b);
    case Recipe::kFp8Bf16: return ApplyFp8(c, t, /*to_bf16=*/true, b);
  }
  return base::Status::Error("unknown recipe", base::ErrorKind::kInternal);
}

}  // namespace loadplan::importer
