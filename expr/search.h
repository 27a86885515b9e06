// Branch and bound over a variable box: minimise an objective, or show it stays >= a threshold.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "expr/expr.h"
#include "expr/arith.h"

namespace loadplan::expr::detail {

// The objective's value at a point, or the evaluation error there.
struct PointValue {
  std::optional<Wide> value;
  std::string error;
};

struct Objective {
  Expr shape;                               // simplified objective: monotonicity and an enclosure
  std::vector<Expr> enclosures;             // further expressions equal to it where defined
  std::map<std::string, Expr> differences;  // var -> shape[var+1] - shape[var], simplified
  std::function<PointValue(const Assignment&)> eval;
  bool maximise = false;
};

// Builds the differences of `shape` for variables that occur outside every atom.
std::map<std::string, Expr> ForwardDifferences(const Expr& shape);

struct SearchResult {
  enum class Status { kComplete, kBelow, kBudget, kError };
  Status status = Status::kComplete;
  // kComplete: without threshold, best is the exact optimum; with one, every point is
  // >= threshold (<= for maximise). kBelow: best beats the threshold at best_at.
  std::optional<Wide> best;
  Assignment best_at;
  std::optional<Wide> bound;  // kBudget: sound bound on the optimum, when one is known
  std::string error;          // kError: the evaluation error at best_at
};

SearchResult Optimise(const Objective& f, const Box& box, std::optional<Wide> threshold,
                      int max_boxes);

// Points worth evaluating in a box: both extreme corners and the midpoint, and every
// corner (or, beyond 6 free variables, each single-variable flip) when `all_corners`.
std::vector<Assignment> SamplePoints(const Box& box, bool all_corners);
// Bisects the widest variable; nullopt for a single point.
std::optional<std::pair<Box, Box>> Split(const Box& box);
bool IsPoint(const Box& box);

}  // namespace loadplan::expr::detail
