// S9 (does not evaluate, with the witness) and B2 (not proved) from a size proof.
#include "verifier/rules/proof_report.h"

#include <fmt/format.h>

#include "verifier/codes.h"

namespace loadplan::verifier::rules {

std::string WitnessText(const Assignment& a) {
  return a.empty() ? std::string("every admissible value") : FormatAssignment(a);
}

bool ReportEvaluates(const Proof& proof, std::string_view ptr, std::string_view what,
                     DiagSink& sink) {
  if (proof.truth == Truth::kTrue) return true;
  if (proof.truth == Truth::kFalse) {
    sink.Error(std::string(codes::kOverflow), std::string(ptr),
               fmt::format("{} does not evaluate at {}: {}", what, WitnessText(proof.witness),
                           proof.error.ok() ? "overflow" : proof.error.message()),
               "keep sizes within 64 bits and divisors non-zero over the variables' ranges");
  } else {
    sink.Error(
        std::string(codes::kUnproved), std::string(ptr),
        fmt::format("could not prove that {} evaluates without overflow over the variable box",
                    what),
        "narrow the variables' ranges or simplify the expression");
  }
  return false;
}

}  // namespace loadplan::verifier::rules
