// FindExtrema: exact minimum and maximum of an expression over a box, by branch and bound.
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "expr/expr.h"
#include "expr/internal.h"
#include "expr/search.h"

namespace loadplan::expr {
namespace {

using detail::Wide;

Assignment AtMinimum(const Box& box) {
  Assignment a;
  for (const auto& [name, r] : box) a[name] = r.min;
  return a;
}

std::optional<std::string> CheckBox(const Expr& e, const Box& box) {
  for (const auto& [name, r] : box) {
    if (r.min > r.max)
      return fmt::format("empty range [{}, {}] for variable {}", r.min, r.max, name);
  }
  for (const std::string& v : Variables(e)) {
    if (!box.contains(v)) return fmt::format("unbound variable {}", v);
  }
  return std::nullopt;
}

// One side of the extrema from a finished search; `proved` says e evaluates everywhere.
std::optional<Extremum> ToExtremum(const detail::SearchResult& r, bool proved,
                                   const Assignment& base) {
  using Status = detail::SearchResult::Status;
  if (r.status == Status::kComplete && r.best) {
    Assignment at = base;
    for (const auto& [name, v] : r.best_at) at[name] = v;
    return Extremum{.value = static_cast<int64_t>(*r.best), .at = std::move(at), .exact = proved};
  }
  if (r.status == Status::kBudget && r.bound && detail::FitsI64(*r.bound)) {
    return Extremum{.value = static_cast<int64_t>(*r.bound), .exact = false};
  }
  return std::nullopt;
}

}  // namespace

Extrema FindExtrema(const Expr& e, const Box& box, const ProofBudget& budget) {
  Assignment base = AtMinimum(box);
  if (std::optional<std::string> bad = CheckBox(e, box))
    return Extrema{.error = base::Status::Error(*bad), .at = base};
  Box used;
  for (const std::string& v : Variables(e)) used.emplace(v, box.at(v));
  Proof defined = ProveEvaluates(e, used, budget);
  if (defined.truth == Truth::kFalse) {
    Assignment at = base;
    for (const auto& [name, v] : defined.witness) at[name] = v;
    return Extrema{.error = defined.error, .at = std::move(at)};
  }
  detail::Objective f{.shape = Simplify(e), .enclosures = {e}};
  f.differences = detail::ForwardDifferences(f.shape);
  f.eval = [&](const Assignment& a) -> detail::PointValue {
    base::Result<int64_t> r = Evaluate(e, a);
    if (!r.ok()) return {.error = r.status().message()};
    return {.value = Wide{*r}};
  };
  Extrema out;
  for (bool maximise : {false, true}) {
    f.maximise = maximise;
    detail::SearchResult r = detail::Optimise(f, used, std::nullopt, budget.max_boxes);
    if (r.status == detail::SearchResult::Status::kError) {
      Extrema failed{.error = base::Status::Error(r.error), .at = base};
      for (const auto& [name, v] : r.best_at) failed.at[name] = v;
      return failed;
    }
    (maximise ? out.max : out.min) = ToExtremum(r, defined.truth == Truth::kTrue, base);
  }
  return out;
}

}  // namespace loadplan::expr
