// How the rule families report a proof about sizes that does not hold.
#pragma once

#include <string>
#include <string_view>

#include "verifier/diag.h"
#include "verifier/expr.h"

namespace loadplan::verifier::rules {

// Reports a failed ProveEvaluates of `what` at `ptr`: kFalse -> S9 with the witness,
// kUnknown -> B2. Returns true when the proof holds.
bool ReportEvaluates(const Proof& proof, std::string_view ptr, std::string_view what,
                     DiagSink& sink);

// "batch=256, ctx=1", or "every admissible value" when the witness is empty.
std::string WitnessText(const Assignment& a);

}  // namespace loadplan::verifier::rules
