// The model types `loadplan import` knows by name (families.cc holds what it knows of each):
// below both the config reader and the family checks, so neither includes the other.
#pragma once

#include <span>
#include <string_view>

namespace loadplan::importer {

// model_type values, sorted.
std::span<const std::string_view> SupportedModelTypes();
bool Supported(std::string_view model_type);

}  // namespace loadplan::importer
