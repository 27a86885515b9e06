// How the rule families speak about names: the names of a list, did-you-mean hints,
// and whether text written where a buffer name belongs is plainly a scalar.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verifier/manifest.h"

namespace loadplan::verifier::rules {

template <typename T>
std::vector<std::string> NamesOf(const std::vector<T>& items) {
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const T& x : items) out.push_back(x.name);
  return out;
}

// "did you mean `x`?" when a candidate is close, else `otherwise`.
std::string SuggestHint(std::string_view word, const std::vector<std::string>& candidates,
                        std::string_view otherwise);

// True when `text`, passed where a buffer name belongs, is plainly a scalar: an
// expression whose names are all declared variables ("8", "batch*2"). Such an
// argument is P5 (a scalar for a buffer parameter), not an unresolved name (S6).
bool LooksScalar(const Manifest& m, std::string_view text);

}  // namespace loadplan::verifier::rules
