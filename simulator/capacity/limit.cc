// SolveLimit: bisection on "fits up to y", then the boundary checked by evaluation.
#include "simulator/capacity/limit.h"

namespace loadplan::simulator::capacity {
namespace {

using verifier::Truth;

verifier::Box Upto(verifier::Box box, std::string_view var, int64_t y) {
  verifier::Range& r = box.find(std::string(var))->second;
  r.max = y;
  return box;
}

verifier::Box At(verifier::Box box, std::string_view var, int64_t y) {
  box.find(std::string(var))->second = verifier::Range{y, y};
  return box;
}

// Where `box` stops fitting: the peak at the proof's witness (exact), else the largest peak over
// the box (a bound unless FindExtrema pins it).
PeakValue WhereItFails(const PeakModel& m, const verifier::Box& box) {
  const FitProof p = FitsOver(m, box);
  if (p.truth == Truth::kFalse) return PeakAtPoint(m, p.witness);
  return PeakOver(m, box);
}

// The largest y in [lo, hi] with fits_up_to(y), given fits_up_to(lo) and not fits_up_to(hi).
int64_t Bisect(const PeakModel& m, const verifier::Box& box, std::string_view var, int64_t lo,
               int64_t hi) {
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (FitsOver(m, Upto(box, var, mid)).truth == Truth::kTrue) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

std::string_view LimitStatusName(LimitStatus s) {
  switch (s) {
    case LimitStatus::kExact: return "exact";
    case LimitStatus::kAtLeast: return "at-least";
    case LimitStatus::kNone: return "none";
    case LimitStatus::kUnknown: return "unknown";
  }
  return "unknown";
}

Limit SolveLimit(const PeakModel& m, std::string_view var, const verifier::Assignment& pinned) {
  const verifier::Box box = Pin(m.box, pinned);
  const verifier::Range r = box.at(std::string(var));
  Limit out{.var = std::string(var), .pinned = pinned};
  const FitProof first = FitsOver(m, Upto(box, var, r.min));
  if (first.truth != Truth::kTrue) {
    out.status = first.truth == Truth::kFalse ? LimitStatus::kNone : LimitStatus::kUnknown;
    out.past = first.truth == Truth::kFalse ? PeakAtPoint(m, first.witness)
                                            : PeakOver(m, At(box, var, r.min));
    return out;
  }
  int64_t largest = r.max;
  if (r.max > r.min && FitsOver(m, box).truth != Truth::kTrue)
    largest = Bisect(m, box, var, r.min, r.max);
  out.largest = largest;
  out.at_largest = PeakOver(m, At(box, var, largest));
  if (largest == r.max) {
    out.status = LimitStatus::kExact;
    return out;
  }
  out.past = WhereItFails(m, At(box, var, largest + 1));
  out.status = Exceeds(*out.past, m.budget) ? LimitStatus::kExact : LimitStatus::kAtLeast;
  return out;
}

}  // namespace loadplan::simulator::capacity
