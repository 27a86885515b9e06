// The peak as the fit frontier sees it: the max of the phase expressions over a variable box,
// a byte budget, and the two questions every frontier answer is built from: "does the peak fit
// the budget everywhere in this sub-box?" (a proof) and "what is the peak at this point?" (an
// evaluation). docs/capacity.md, "The predicate".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/phases/phases.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::simulator::capacity {

struct PeakModel {
  std::vector<verifier::Expr> phases;  // peak(x) = max over these (load, once, serve)
  verifier::Box box;                   // every variable with its [min, max]
  int64_t budget = 0;                  // bytes: device memory less the reserve
  verifier::ProofBudget proof;         // per ProveLessEq / FindExtrema call
};

// The phases of `phases` over the manifest's variable box. A budget above INT64_MAX is clamped
// (no expression value can pass it).
PeakModel PeakModelOf(const verifier::Manifest& m, const MemoryPhases& phases, uint64_t budget);

// Whether peak <= budget at every point of `box` (which must bind the model's variables):
// kTrue proven for every phase; kFalse with a witness point where some phase passes the budget
// or fails to evaluate (an overflow is not a fit); kUnknown when a proof ran out of budget.
struct FitProof {
  verifier::Truth truth = verifier::Truth::kUnknown;
  verifier::Assignment witness;  // kFalse: where it does not fit
};
FitProof FitsOver(const PeakModel& m, const verifier::Box& box);

// The peak at one point (exact evaluation), or the largest peak over a box (FindExtrema per
// phase; `exact` false when only a sound upper bound is known). `error` names an evaluation
// failure (then `bytes` is empty) with its point in `at`.
struct PeakValue {
  std::optional<int64_t> bytes;
  verifier::Assignment at;
  bool exact = false;
  base::Status error;
  bool operator==(const PeakValue&) const = default;
};
PeakValue PeakAtPoint(const PeakModel& m, const verifier::Assignment& point);
PeakValue PeakOver(const PeakModel& m, const verifier::Box& box);

// True when the value is verified over the budget: an exact peak above it, or an evaluation
// failure (a point where the peak cannot be computed does not fit).
bool Exceeds(const PeakValue& v, int64_t budget);

// `box` with each variable of `pinned` held at its value.
verifier::Box Pin(verifier::Box box, const verifier::Assignment& pinned);

}  // namespace loadplan::simulator::capacity
