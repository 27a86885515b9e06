// The JSON document as the verifier reads it: where an object repeats a key, the first
// occurrence is kept (the verifier reports the repeat as S4), unlike nlohmann's DOM, which
// keeps the last. Diagnostic pointers are resolved against this reading.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace loadplan::fuzz {

// nullopt when `text` is not JSON (by nlohmann's reading: syntax, encoding).
std::optional<nlohmann::json> ParseFirstWins(std::string_view text);

// Whether `pointer` (RFC 6901, escaped) names a value in `doc`; false for a malformed pointer.
bool PointerResolves(const nlohmann::json& doc, const std::string& pointer);

}  // namespace loadplan::fuzz
