// Proofs over a variable box: evaluability, lhs <= rhs, and exact extrema.
//
// Every search runs on the sub-box of the variables the expressions use; reported
// assignments bind every variable of the caller's box (unused ones at their minimum).
// A kFalse witness or an extremum's point is always checked by exact evaluation.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "expr/expr.h"
#include "expr/internal.h"
#include "expr/poly.h"
#include "expr/search.h"

namespace loadplan::expr {
namespace {

using detail::Wide;

// The part of a caller's box a search needs, or why none can run.
struct Setup {
  Box box;              // only the variables used
  std::string invalid;  // an empty range: no search possible
  std::string unbound;  // a used variable missing from the box
  Assignment base;      // every box variable at its minimum
};

Setup Prepare(const std::vector<const Expr*>& exprs, const Box& box) {
  Setup s;
  for (const auto& [name, r] : box) {
    if (r.min > r.max)
      s.invalid = fmt::format("empty range [{}, {}] for variable {}", r.min, r.max, name);
    s.base[name] = r.min;
  }
  for (const Expr* e : exprs) {
    for (const std::string& v : Variables(*e)) {
      auto it = box.find(v);
      if (it == box.end() && s.unbound.empty()) s.unbound = fmt::format("unbound variable {}", v);
      if (it != box.end()) s.box.emplace(v, it->second);
    }
  }
  return s;
}

bool ValidBox(const Box& box) {
  for (const auto& [name, r] : box) {
    if (r.min > r.max) return false;
  }
  return true;
}

Assignment Complete(const Setup& s, const Assignment& at) {
  Assignment out = s.base;
  for (const auto& [name, v] : at) out[name] = v;
  return out;
}

// Depth-first: a box proves itself when its enclosure cannot fail; otherwise its sample
// points are evaluated and it is bisected.
Proof EvaluatesIn(const Expr& e, const Box& box, int max_boxes) {
  std::vector<Box> stack{box};
  for (int examined = 0; !stack.empty(); ++examined) {
    if (examined >= max_boxes) return Proof{};
    Box b = std::move(stack.back());
    stack.pop_back();
    if (!detail::Enclose(e, b).may_fail) continue;
    for (Assignment& a : detail::SamplePoints(b, examined == 0)) {
      base::Result<int64_t> r = Evaluate(e, a);
      if (!r.ok())
        return Proof{.truth = Truth::kFalse, .witness = std::move(a), .error = r.status()};
    }
    std::optional<std::pair<Box, Box>> halves = detail::Split(b);
    if (!halves) continue;
    stack.push_back(std::move(halves->second));
    stack.push_back(std::move(halves->first));
  }
  return Proof{.truth = Truth::kTrue};
}

// A witness of kFalse; `error` the evaluation error there, empty when both sides evaluate
// (a plain counterexample: the proof's error stays ok).
Proof Failure(const Setup& s, Assignment at, std::string error) {
  return Proof{.truth = Truth::kFalse,
               .witness = Complete(s, at),
               .error = error.empty() ? base::Status() : base::Status::Error(std::move(error))};
}

}  // namespace

Proof ProveEvaluates(const Expr& e, const Box& box, const ProofBudget& budget) {
  // Fast path: a variable-free expression that evaluates is what the search would
  // find on its single (empty) box, given a budget of one box and a valid box.
  if (budget.max_boxes >= 1 && IsVariableFree(e) && ValidBox(box) && ValueAt(e, {})) {
    return Proof{.truth = Truth::kTrue};
  }
  Setup s = Prepare({&e}, box);
  if (!s.invalid.empty()) return Proof{.error = base::Status::Error(s.invalid)};
  if (!s.unbound.empty()) return Failure(s, {}, s.unbound);
  Proof p = EvaluatesIn(e, s.box, budget.max_boxes);
  if (p.truth == Truth::kFalse) {
    p.witness = Complete(s, p.witness);
    p.lhs_at = std::nullopt;
  }
  return p;
}

namespace {

constexpr int kSideProofBoxes = 64;

// Shows form >= 0 over the box; a proof only: the points it evaluates need not be real.
bool ProvesNonNegative(const Expr& form, const Box& box, int max_boxes) {
  detail::Objective f{.shape = form};
  f.differences = detail::ForwardDifferences(form);
  f.eval = [&](const Assignment& a) -> detail::PointValue {
    base::Result<int64_t> r = Evaluate(form, a);
    if (!r.ok()) return {.error = r.status().message()};
    return {.value = Wide{*r}};
  };
  return detail::Optimise(f, box, Wide{0}, max_boxes).status ==
         detail::SearchResult::Status::kComplete;
}

// Sufficient conditions for d >= 0: a cofactor of known sign, or the division
// relaxation (and its cofactor).
bool ProvesBySideForms(const Expr& d, const Box& box, int max_boxes) {
  std::vector<std::pair<Expr, Box>> forms;
  auto add_cofactor = [&forms](const Expr& e, const Box& b) {
    std::optional<detail::Factored> f = detail::FactorCommonMonomial(e);
    std::optional<Range> sign = f ? detail::Enclose(f->factor, b).range : std::nullopt;
    if (sign && sign->min >= 0) forms.emplace_back(f->cofactor, b);
    if (sign && sign->max <= 0) forms.emplace_back(Simplify(-f->cofactor), b);
  };
  add_cofactor(d, box);
  if (std::optional<detail::Relaxed> r = detail::RelaxDivisions(d, box)) {
    Box wider = box;
    wider.insert(r->remainders.begin(), r->remainders.end());
    forms.emplace_back(r->scaled, wider);
    add_cofactor(r->scaled, wider);
  }
  for (const auto& [form, b] : forms) {
    if (ProvesNonNegative(form, b, max_boxes)) return true;
  }
  return false;
}

Proof ProveOrdered(const Expr& lhs, const Expr& rhs, const Setup& s, const ProofBudget& budget) {
  Expr d = Simplify(rhs - lhs);
  if (ProvesBySideForms(d, s.box, std::min(budget.max_boxes, kSideProofBoxes)))
    return Proof{.truth = Truth::kTrue};
  detail::Objective f{.shape = std::move(d), .enclosures = {rhs - lhs}};
  f.differences = detail::ForwardDifferences(f.shape);
  f.eval = [&](const Assignment& a) -> detail::PointValue {
    base::Result<int64_t> l = Evaluate(lhs, a);
    if (!l.ok()) return {.error = l.status().message()};
    base::Result<int64_t> r = Evaluate(rhs, a);
    if (!r.ok()) return {.error = r.status().message()};
    return {.value = Wide{*r} - Wide{*l}};
  };
  detail::SearchResult r = detail::Optimise(f, s.box, Wide{0}, budget.max_boxes);
  using Status = detail::SearchResult::Status;
  if (r.status == Status::kComplete) return Proof{.truth = Truth::kTrue};
  if (r.status == Status::kBudget) return Proof{};
  Proof p = Failure(s, r.best_at, r.error);
  p.lhs_at = ValueAt(lhs, p.witness);
  p.rhs_at = ValueAt(rhs, p.witness);
  return p;
}

}  // namespace

Proof ProveLessEq(const Expr& lhs, const Expr& rhs, const Box& box, const ProofBudget& budget) {
  // Fast path: both sides variable-free, both evaluate and lhs <= rhs (anything else
  // takes the full path, which reports the witness and values).
  if (budget.max_boxes >= 1 && IsVariableFree(lhs) && IsVariableFree(rhs) && ValidBox(box)) {
    std::optional<int64_t> l = ValueAt(lhs, {}), r = ValueAt(rhs, {});
    if (l && r && *l <= *r) return Proof{.truth = Truth::kTrue};
  }
  Setup s = Prepare({&lhs, &rhs}, box);
  if (!s.invalid.empty()) return Proof{.error = base::Status::Error(s.invalid)};
  if (!s.unbound.empty()) return Failure(s, {}, s.unbound);
  Proof defined = Proof{.truth = Truth::kTrue};
  for (const Expr* side : {&lhs, &rhs}) {
    Proof p = EvaluatesIn(*side, s.box, budget.max_boxes);
    if (p.truth == Truth::kFalse) {
      Proof out = Failure(s, p.witness, p.error.message());
      out.lhs_at = ValueAt(lhs, out.witness);
      out.rhs_at = ValueAt(rhs, out.witness);
      return out;
    }
    if (p.truth == Truth::kUnknown) defined.truth = Truth::kUnknown;
  }
  Proof p = ProveOrdered(lhs, rhs, s, budget);
  if (p.truth == Truth::kTrue) return defined;
  return p;
}

}  // namespace loadplan::expr
