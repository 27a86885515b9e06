// The frontier's two primitives: a proof that the peak fits over a sub-box, the peak at a point.
#include "simulator/capacity/peak_model.h"

#include <algorithm>
#include <limits>

namespace loadplan::simulator::capacity {

using verifier::Expr;
using verifier::Truth;

PeakModel PeakModelOf(const verifier::Manifest& m, const MemoryPhases& phases, uint64_t budget) {
  PeakModel out{.phases = {},
                .box = m.VarBox(),
                .budget = static_cast<int64_t>(
                    std::min<uint64_t>(budget, std::numeric_limits<int64_t>::max())),
                .proof = {}};
  for (const PhasePeak& p : phases.phases) out.phases.push_back(p.bytes);
  return out;
}

FitProof FitsOver(const PeakModel& m, const verifier::Box& box) {
  FitProof out{.truth = Truth::kTrue, .witness = {}};
  const Expr budget = Expr::Const(m.budget);
  for (const Expr& e : m.phases) {
    const verifier::Proof p = verifier::ProveLessEq(e, budget, box, m.proof);
    if (p.truth == Truth::kFalse) return FitProof{.truth = Truth::kFalse, .witness = p.witness};
    if (p.truth == Truth::kUnknown) out.truth = Truth::kUnknown;
  }
  return out;
}

PeakValue PeakAtPoint(const PeakModel& m, const verifier::Assignment& point) {
  PeakValue out{.bytes = {}, .at = point, .exact = true, .error = {}};
  for (const Expr& e : m.phases) {
    const base::Result<int64_t> r = verifier::Evaluate(e, point);
    if (!r.ok()) return PeakValue{.bytes = {}, .at = point, .exact = true, .error = r.status()};
    out.bytes = std::max(out.bytes.value_or(*r), *r);
  }
  return out;
}

PeakValue PeakOver(const PeakModel& m, const verifier::Box& box) {
  PeakValue out{.bytes = {}, .at = {}, .exact = true, .error = {}};
  for (const Expr& e : m.phases) {
    const verifier::Extrema x = verifier::FindExtrema(e, box, m.proof);
    if (!x.error.ok() || !x.max) {
      return PeakValue{.bytes = {},
                       .at = x.at,
                       .exact = !x.error.ok(),
                       .error = x.error.ok()
                                    ? base::Status::Error("no bound of the peak fits 64 bits")
                                    : x.error};
    }
    if (!out.bytes || x.max->value > *out.bytes) {
      out.bytes = x.max->value;
      out.at = x.max->at;
    }
    out.exact = out.exact && x.max->exact;
  }
  return out;
}

bool Exceeds(const PeakValue& v, int64_t budget) {
  if (!v.error.ok()) return v.exact;  // an evaluation failure found at a point
  return v.exact && v.bytes && *v.bytes > budget;
}

verifier::Box Pin(verifier::Box box, const verifier::Assignment& pinned) {
  for (const auto& [name, value] : pinned) {
    auto it = box.find(name);
    if (it != box.end()) it->second = verifier::Range{value, value};
  }
  return box;
}

}  // namespace loadplan::simulator::capacity
