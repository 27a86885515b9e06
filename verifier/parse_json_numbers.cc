// Masking JSON numbers that overflow a double, so the strict reader can report them as S11.
#include "verifier/parse_json_numbers.h"

#include <cmath>
#include <cstdlib>

namespace loadplan::verifier::json {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < t.size() && IsDigit(t[i])) ++i;
    return i > start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

bool Overflows(std::string_view token) {
  const std::string copy(token);
  return IsJsonNumber(token) && std::isinf(std::strtod(copy.c_str(), nullptr));
}

bool InNumber(char c) {
  return IsDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// The index just past the string that opens at text[i] (a '"').
size_t SkipString(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

}  // namespace

std::optional<std::string> MaskOverflowingNumbers(std::string_view text, MaskedNumbers& originals) {
  std::optional<std::string> masked;
  originals.clear();
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      i = SkipString(text, i);
      continue;
    }
    if (!IsDigit(text[i]) && text[i] != '-') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && InNumber(text[end])) ++end;
    const std::string_view token = text.substr(i, end - i);
    if (token == kMaskedNumber) {
      originals.emplace_back(std::nullopt);
    } else if (Overflows(token)) {
      if (!masked) masked.emplace(text);
      masked->replace(
          i, token.size(),
          std::string(kMaskedNumber) + std::string(token.size() - kMaskedNumber.size(), ' '));
      originals.emplace_back(std::string(token));
    }
    i = end;
  }
  if (!masked) originals.clear();
  return masked;
}

}  // namespace loadplan::verifier::json
