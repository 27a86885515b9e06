// The largest value of one variable that fits, with some variables pinned: one bisection over
// the monotone predicate "fits up to y", and its verification at the boundary and one past it.
//
//   fits_up_to(y) := peak <= budget over { var in [var.min, y], pinned at their values,
//                                          every other variable over its whole [min, max] }
//
//   var.min ........ largest | largest + 1 ........ var.max
//   proven to fit (ProveLessEq) | evaluated over the budget (or largest == var.max)
//
// fits_up_to is monotone in y (a larger y is a larger box), so bisection is valid even where
// the peak itself is not monotone in `var`. Cost: about log2(var.max - var.min) + 2 proofs per
// phase, each corner evaluation where the phase is monotone, interval splitting where not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "simulator/capacity/peak_model.h"

namespace loadplan::simulator::capacity {

enum class LimitStatus : uint8_t {
  kExact,    // largest fits up to it (proven), and largest + 1 does not (evaluated) or is max
  kAtLeast,  // fits up to largest (proven); largest + 1 neither proven nor refuted in budget
  kNone,     // nothing fits: the peak passes the budget at var.min (a verified witness)
  kUnknown,  // not even var.min could be decided within the proof budget
};
std::string_view LimitStatusName(LimitStatus s);  // "exact", "at-least", "none", "unknown"

struct Limit {
  std::string var;              // the variable solved for
  verifier::Assignment pinned;  // held at these values; the others range over their box
  std::optional<int64_t> largest;
  LimitStatus status = LimitStatus::kUnknown;
  PeakValue at_largest;           // the peak with var = largest (max over the free variables)
  std::optional<PeakValue> past;  // where it stops fitting: var = largest + 1 (var.min for
                                  // kNone); empty when largest == var.max
  bool operator==(const Limit&) const = default;
};

// `var` must be a variable of the model's box; `pinned` may bind any others.
Limit SolveLimit(const PeakModel& m, std::string_view var, const verifier::Assignment& pinned);

}  // namespace loadplan::simulator::capacity
