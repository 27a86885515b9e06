// ResolveAtoms: replaces the min/max/div/mod atoms that a box decides by their value.
//
// Inside a box where ctx <= 4096, ctx - min(ctx, 4096) is ctx - ctx: once resolved and
// simplified it is 0, which interval arithmetic alone can never see.
#include <optional>
#include <utility>

#include "expr/internal.h"

namespace loadplan::expr::detail {
namespace {

// The resolved form of a decided atom whose arguments are already resolved.
std::optional<Expr> Decide(const Expr& e, const Box& box) {
  bool decidable =
      e.op == ExprOp::kMin || e.op == ExprOp::kMax || e.op == ExprOp::kMod || e.op == ExprOp::kDiv;
  if (!decidable) return std::nullopt;
  std::optional<Range> a = Enclose(e.args[0], box).range;
  std::optional<Range> b = Enclose(e.args[1], box).range;
  if (!a || !b) return std::nullopt;
  switch (e.op) {
    case ExprOp::kMin:
      if (a->max <= b->min) return e.args[0];
      if (b->max <= a->min) return e.args[1];
      return std::nullopt;
    case ExprOp::kMax:
      if (a->min >= b->max) return e.args[0];
      if (b->min >= a->max) return e.args[1];
      return std::nullopt;
    case ExprOp::kMod:
    case ExprOp::kDiv: {
      bool small = b->min == b->max && b->min > 0 && a->min >= 0 && a->max < b->min;
      if (!small) return std::nullopt;
      return e.op == ExprOp::kMod ? e.args[0] : Expr::Const(0);
    }
    default: return std::nullopt;
  }
}

Expr Resolve(const Expr& e, const Box& box, bool& changed) {
  if (e.args.empty()) return e;
  Expr out{.op = e.op, .value = e.value, .name = e.name};
  for (const Expr& a : e.args) out.args.push_back(Resolve(a, box, changed));
  if (std::optional<Expr> d = Decide(out, box)) {
    changed = true;
    return std::move(*d);
  }
  return out;
}

}  // namespace

std::optional<Expr> ResolveAtoms(const Expr& e, const Box& box) {
  bool changed = false;
  Expr out = Resolve(e, box, changed);
  if (!changed) return std::nullopt;
  return out;
}

}  // namespace loadplan::expr::detail
