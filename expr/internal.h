// Internal interfaces of the expression engine: constant folding, enclosures, monotonicity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "expr/expr.h"

namespace loadplan::expr::detail {

// One binary operator on constants with the evaluation semantics; nullopt on error.
std::optional<int64_t> FoldBinary(ExprOp op, int64_t a, int64_t b);

// Interval enclosure of e over the box (values where e is defined), and whether some
// point of the box may fail to evaluate: an intermediate bound leaves int64, a divisor
// interval contains 0, or a variable is unbound. !may_fail proves evaluation everywhere.
struct Enclosure {
  std::optional<Range> range;
  bool may_fail = false;
};
Enclosure Enclose(const Expr& e, const Box& box);
// The interval of one operator node from its operands' (b unused for kNeg).
std::optional<Range> NodeRange(ExprOp op, std::optional<Range> a, std::optional<Range> b);

// e with the atoms the box decides replaced: min/max whose operand intervals do not
// overlap, a % c and a / c (c > 0 constant) with a in [0, c - 1]. nullopt when none is.
std::optional<Expr> ResolveAtoms(const Expr& e, const Box& box);

// How e changes when `var` grows by one inside the box, other variables held.
enum class Direction : uint8_t { kConst, kUp, kDown, kUnknown };
Direction Flip(Direction d);
// Structural rules (sums, products of signed factors, division by signed divisors,
// min/max); sound but incomplete.
Direction StructuralDirection(const Expr& e, const std::string& var, const Box& box);
// From the enclosure of the forward difference d = e[var+1] - e[var].
Direction DifferenceDirection(const Expr& diff, const std::string& var, const Box& box);

}  // namespace loadplan::expr::detail
