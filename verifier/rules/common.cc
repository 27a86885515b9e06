// Small helpers the rule families share: did-you-mean hints and proof reporting.
#include "verifier/rules/common.h"

#include <fmt/format.h>

#include "verifier/codes.h"

namespace loadplan::verifier::rules {

std::string SuggestHint(std::string_view word, const std::vector<std::string>& candidates,
                        std::string_view otherwise) {
  std::string best = DidYouMean(word, candidates);
  if (best.empty()) return std::string(otherwise);
  return fmt::format("did you mean `{}`?", best);
}

bool LooksScalar(const Manifest& m, std::string_view text) {
  ExprParseResult r = ParseExpr(text);
  if (!r.expr) return false;
  for (const std::string& v : Variables(*r.expr)) {
    if (m.FindVar(v) == nullptr) return false;
  }
  return true;
}

std::string WitnessText(const Assignment& a) {
  return a.empty() ? std::string("every admissible value") : FormatAssignment(a);
}

bool ReportEvaluates(const Proof& proof, std::string_view ptr, std::string_view what, DiagSink& sink) {
  if (proof.truth == Truth::kTrue) return true;
  if (proof.truth == Truth::kFalse) {
    sink.Error(std::string(codes::kOverflow), std::string(ptr),
               fmt::format("{} does not evaluate at {}: {}", what, WitnessText(proof.witness),
                           proof.error.empty() ? "overflow" : proof.error),
               "keep sizes within 64 bits and divisors non-zero over the variables' ranges");
  } else {
    sink.Error(std::string(codes::kUnproved), std::string(ptr),
               fmt::format("could not prove that {} evaluates without overflow over the variable box", what),
               "narrow the variables' ranges or simplify the expression");
  }
  return false;
}

}  // namespace loadplan::verifier::rules
