// The nine families import knows by name.
#include "importer/family_names.h"

#include <algorithm>
#include <array>

namespace loadplan::importer {
namespace {

constexpr std::array<std::string_view, 9> kTypes = {"deepseek_v3", "gpt_oss", "kimi_k2",
                                                    "llama",       "mistral", "mixtral",
                                                    "qwen2",       "qwen3",   "qwen3_moe"};

}  // namespace

std::span<const std::string_view> SupportedModelTypes() { return kTypes; }

bool Supported(std::string_view model_type) {
  return std::binary_search(kTypes.begin(), kTypes.end(), model_type);
}

}  // namespace loadplan::importer
