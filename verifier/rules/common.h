// Small helpers the rule families share: name lists, did-you-mean hints, proof reporting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verifier/diag.h"
#include "verifier/expr.h"
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

// Reports a failed ProveEvaluates of `what` at `ptr`: kFalse -> S9 with the witness,
// kUnknown -> B2. Returns true when the proof holds.
bool ReportEvaluates(const Proof& proof, std::string_view ptr, std::string_view what, DiagSink& sink);

// True when `text`, passed where a buffer name belongs, is plainly a scalar: an
// expression whose names are all declared variables ("8", "batch*2"). Such an
// argument is P5 (a scalar for a buffer parameter), not an unresolved name (S6).
bool LooksScalar(const Manifest& m, std::string_view text);

// "batch=256, ctx=1", or "every admissible value" when the witness is empty.
std::string WitnessText(const Assignment& a);

}  // namespace loadplan::verifier::rules
