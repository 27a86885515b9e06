// Interval arithmetic over a variable box: enclosures, evaluability, IntervalBounds.
//
// Bounds are computed in 128 bits and checked to fit int64 at every node. A divisor
// interval containing 0 is split into its negative and positive parts: the enclosure
// covers the points where the division is defined, and `may_fail` records the rest.
#include <algorithm>
#include <initializer_list>
#include <optional>

#include "expr/expr.h"
#include "expr/arith.h"
#include "expr/internal.h"

namespace loadplan::expr::detail {
namespace {

std::optional<Range> Make(Wide lo, Wide hi, bool& may_fail) {
  if (!FitsI64(lo) || !FitsI64(hi)) {
    may_fail = true;
    return std::nullopt;
  }
  return Range{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

std::optional<Range> Join(std::optional<Range> a, std::optional<Range> b) {
  if (!a) return b;
  if (!b) return a;
  return Range{std::min(a->min, b->min), std::max(a->max, b->max)};
}

std::optional<Range> Corners(std::initializer_list<Wide> v, bool& may_fail) {
  return Make(std::min(v), std::max(v), may_fail);
}

// Floor remainder by a divisor interval of one sign (b.min > 0 or b.max < 0).
Range ModPart(Range a, Range b) {
  Wide al = a.min, ah = a.max, bl = b.min, bh = b.max;
  if (bl == bh && ah - al < (bl < 0 ? -bl : bl)) {
    Wide ml = FloorModW(al, bl), mh = FloorModW(ah, bl);
    if (ml <= mh) return Range{static_cast<int64_t>(ml), static_cast<int64_t>(mh)};
  }
  if (bl > 0) {
    if (al >= 0 && ah < bl) return a;
    Wide hi = al >= 0 ? std::min(ah, bh - 1) : bh - 1;
    return Range{0, static_cast<int64_t>(hi)};
  }
  if (ah <= 0 && al > bh) return a;
  Wide lo = ah <= 0 ? std::max(al, bl + 1) : bl + 1;
  return Range{static_cast<int64_t>(lo), 0};
}

std::optional<Range> DividePart(ExprOp op, Range a, Range b, bool& may_fail) {
  if (op == ExprOp::kMod) return ModPart(a, b);
  auto q = [op](Wide x, Wide y) { return op == ExprOp::kDiv ? FloorDivW(x, y) : CeilDivW(x, y); };
  return Corners({q(a.min, b.min), q(a.min, b.max), q(a.max, b.min), q(a.max, b.max)}, may_fail);
}

// Each sign of the divisor on its own (0 only fails). A part whose quotients leave int64
// (INT64_MIN / -1) has no enclosure, and neither has the whole: dropping the part would leave
// out its points that do evaluate (INT64_MIN / -2).
std::optional<Range> Divide(ExprOp op, Range a, Range b, bool& may_fail) {
  if (b.min <= 0 && b.max >= 0) may_fail = true;
  std::optional<Range> out;
  for (const bool negative : {true, false}) {
    if (negative ? b.min > -1 : b.max < 1) continue;
    const Range part = negative ? Range{b.min, std::min<int64_t>(b.max, -1)}
                                : Range{std::max<int64_t>(b.min, 1), b.max};
    const std::optional<Range> q = DividePart(op, a, part, may_fail);
    if (!q) return std::nullopt;
    out = Join(out, q);
  }
  return out;
}

std::optional<Range> Binary(ExprOp op, Range a, Range b, bool& may_fail) {
  Wide al = a.min, ah = a.max, bl = b.min, bh = b.max;
  switch (op) {
    case ExprOp::kAdd: return Make(al + bl, ah + bh, may_fail);
    case ExprOp::kSub: return Make(al - bh, ah - bl, may_fail);
    case ExprOp::kMul: return Corners({al * bl, al * bh, ah * bl, ah * bh}, may_fail);
    case ExprOp::kMin: return Range{std::min(a.min, b.min), std::min(a.max, b.max)};
    case ExprOp::kMax: return Range{std::max(a.min, b.min), std::max(a.max, b.max)};
    default: return Divide(op, a, b, may_fail);
  }
}

std::optional<Range> Enc(const Expr& e, const Box& box, bool& may_fail) {
  switch (e.op) {
    case ExprOp::kConst: return Range{e.value, e.value};
    case ExprOp::kVar: {
      auto it = box.find(e.name);
      if (it == box.end()) {
        may_fail = true;
        return std::nullopt;
      }
      return it->second;
    }
    case ExprOp::kNeg: {
      std::optional<Range> a = Enc(e.args[0], box, may_fail);
      if (!a) return std::nullopt;
      return Make(-Wide{a->max}, -Wide{a->min}, may_fail);
    }
    default: break;
  }
  std::optional<Range> a = Enc(e.args[0], box, may_fail);
  std::optional<Range> b = Enc(e.args[1], box, may_fail);
  if (!a || !b) return std::nullopt;
  return Binary(e.op, *a, *b, may_fail);
}

}  // namespace

std::optional<Range> NodeRange(ExprOp op, std::optional<Range> a, std::optional<Range> b) {
  bool may_fail = false;
  if (!a) return std::nullopt;
  if (op == ExprOp::kNeg) return Make(-Wide{a->max}, -Wide{a->min}, may_fail);
  if (!b) return std::nullopt;
  return Binary(op, *a, *b, may_fail);
}

Enclosure Enclose(const Expr& e, const Box& box) {
  Enclosure out;
  out.range = Enc(e, box, out.may_fail);
  if (!out.range) out.may_fail = true;
  return out;
}

}  // namespace loadplan::expr::detail

namespace loadplan::expr {

std::optional<Range> IntervalBounds(const Expr& e, const Box& box) {
  for (const auto& [name, r] : box) {
    if (r.min > r.max) return std::nullopt;
  }
  return detail::Enclose(e, box).range;
}

}  // namespace loadplan::expr
