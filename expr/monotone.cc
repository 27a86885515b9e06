// Monotonicity of an expression in one variable over a box, for corner evaluation.
//
// Structural rules propagate a direction bottom-up with the node's interval:
// sums combine, a factor of known sign scales, floor/ceil division is increasing in
// the dividend for a positive divisor and decreasing in a positive divisor for a
// non-negative dividend, min/max combine like sums. Anything else is kUnknown.
#include <optional>
#include <string>

#include "expr/expr.h"
#include "expr/internal.h"

namespace loadplan::expr::detail {
namespace {

struct Mono {
  std::optional<Range> range;
  Direction dir = Direction::kUnknown;
};

Direction Combine(Direction a, Direction b) {
  if (a == Direction::kConst) return b;
  if (b == Direction::kConst) return a;
  return a == b ? a : Direction::kUnknown;
}

// Direction of s * d where s is a factor constant in the variable with range r.
Direction Scale(Direction d, const std::optional<Range>& r) {
  if (d == Direction::kConst) return d;
  if (!r) return Direction::kUnknown;
  if (r->min == 0 && r->max == 0) return Direction::kConst;
  if (r->min >= 0) return d;
  if (r->max <= 0) return Flip(d);
  return Direction::kUnknown;
}

bool Signed(const std::optional<Range>& r) { return r && (r->min > 0 || r->max < 0); }

Direction Product(const Mono& a, const Mono& b) {
  if (a.dir == Direction::kConst) return Scale(b.dir, a.range);
  if (b.dir == Direction::kConst) return Scale(a.dir, b.range);
  if (!a.range || !b.range || a.dir != b.dir) return Direction::kUnknown;
  if (a.range->min >= 0 && b.range->min >= 0) return a.dir;
  if (a.range->max <= 0 && b.range->max <= 0) return Flip(a.dir);
  return Direction::kUnknown;
}

// floor(a / b) and ceil(a / b): split the change into the dividend's and the divisor's.
Direction Quotient(const Mono& a, const Mono& b) {
  Direction by_a = Direction::kUnknown, by_b = Direction::kUnknown;
  if (a.dir == Direction::kConst)
    by_a = Direction::kConst;
  else if (Signed(b.range))
    by_a = b.range->min > 0 ? a.dir : Flip(a.dir);
  if (b.dir == Direction::kConst)
    by_b = Direction::kConst;
  else if (Signed(b.range) && a.range && a.range->min >= 0)
    by_b = Flip(b.dir);
  else if (Signed(b.range) && a.range && a.range->max <= 0)
    by_b = b.dir;
  return Combine(by_a, by_b);
}

Direction Join(ExprOp op, const Mono& a, const Mono& b) {
  switch (op) {
    case ExprOp::kAdd:
    case ExprOp::kMin:
    case ExprOp::kMax: return Combine(a.dir, b.dir);
    case ExprOp::kSub: return Combine(a.dir, Flip(b.dir));
    case ExprOp::kMul: return Product(a, b);
    case ExprOp::kDiv:
    case ExprOp::kCeilDiv: return Quotient(a, b);
    default:
      return a.dir == Direction::kConst && b.dir == Direction::kConst ? Direction::kConst
                                                                      : Direction::kUnknown;
  }
}

Mono Analyse(const Expr& e, const std::string& var, const Box& box) {
  switch (e.op) {
    case ExprOp::kConst: return {Range{e.value, e.value}, Direction::kConst};
    case ExprOp::kVar: {
      auto it = box.find(e.name);
      if (it == box.end()) return {};
      bool moves = e.name == var && it->second.min < it->second.max;
      return {it->second, moves ? Direction::kUp : Direction::kConst};
    }
    case ExprOp::kNeg: {
      Mono a = Analyse(e.args[0], var, box);
      return {NodeRange(e.op, a.range, std::nullopt), Flip(a.dir)};
    }
    default: break;
  }
  Mono a = Analyse(e.args[0], var, box);
  Mono b = Analyse(e.args[1], var, box);
  return {NodeRange(e.op, a.range, b.range), Join(e.op, a, b)};
}

}  // namespace

Direction Flip(Direction d) {
  if (d == Direction::kUp) return Direction::kDown;
  if (d == Direction::kDown) return Direction::kUp;
  return d;
}

Direction StructuralDirection(const Expr& e, const std::string& var, const Box& box) {
  return Analyse(e, var, box).dir;
}

Direction DifferenceDirection(const Expr& diff, const std::string& var, const Box& box) {
  auto it = box.find(var);
  if (it == box.end()) return Direction::kUnknown;
  if (it->second.min >= it->second.max) return Direction::kConst;
  Box shrunk = box;
  shrunk[var].max -= 1;  // the difference compares var with var + 1, both inside the box
  std::optional<Range> r = Enclose(diff, shrunk).range;
  if (!r) return Direction::kUnknown;
  if (r->min == 0 && r->max == 0) return Direction::kConst;
  if (r->min >= 0) return Direction::kUp;
  if (r->max <= 0) return Direction::kDown;
  return Direction::kUnknown;
}

}  // namespace loadplan::expr::detail
