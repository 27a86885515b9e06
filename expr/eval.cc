// Exact evaluation of size expressions with checked int64 arithmetic.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "expr/expr.h"
#include "expr/arith.h"
#include "expr/internal.h"

namespace loadplan::expr {
namespace {

using detail::Wide;

// Result of one binary operator on int64 values; `error` is empty on success.
struct OpResult {
  std::optional<int64_t> value;
  const char* error = "";
};

// A node's value, or the error (internal: the recursion builds no Status per node).
struct Evaluated {
  std::optional<int64_t> value;
  std::string error;
};

OpResult ApplyBinary(ExprOp op, int64_t a, int64_t b) {
  const Wide wa = a, wb = b;
  std::optional<int64_t> v;
  bool divides = op == ExprOp::kDiv || op == ExprOp::kMod || op == ExprOp::kCeilDiv;
  if (divides && b == 0) return {.error = "division by zero"};
  switch (op) {
    case ExprOp::kAdd: v = detail::CheckedAdd(a, b); break;
    case ExprOp::kSub: v = detail::CheckedSub(a, b); break;
    case ExprOp::kMul: v = detail::CheckedMul(a, b); break;
    case ExprOp::kDiv: v = detail::Narrow(detail::FloorDivW(wa, wb)); break;
    case ExprOp::kMod: v = detail::Narrow(detail::FloorModW(wa, wb)); break;
    case ExprOp::kCeilDiv: v = detail::Narrow(detail::CeilDivW(wa, wb)); break;
    case ExprOp::kMin: v = a < b ? a : b; break;
    case ExprOp::kMax: v = a > b ? a : b; break;
    default: break;
  }
  if (!v) return {.error = "overflow"};
  return {.value = v};
}

Evaluated EvalNode(const Expr& e, const Assignment& at) {
  switch (e.op) {
    case ExprOp::kConst: return {.value = e.value};
    case ExprOp::kVar: {
      auto it = at.find(e.name);
      if (it == at.end()) return {.error = fmt::format("unbound variable {}", e.name)};
      return {.value = it->second};
    }
    case ExprOp::kNeg: {
      Evaluated a = EvalNode(e.args[0], at);
      if (!a.value) return a;
      std::optional<int64_t> v = detail::CheckedSub(0, *a.value);
      if (!v) return {.error = fmt::format("overflow in {}", ToString(e))};
      return {.value = v};
    }
    default: break;
  }
  Evaluated a = EvalNode(e.args[0], at);
  if (!a.value) return a;
  Evaluated b = EvalNode(e.args[1], at);
  if (!b.value) return b;
  OpResult r = ApplyBinary(e.op, *a.value, *b.value);
  if (!r.value) return {.error = fmt::format("{} in {}", r.error, ToString(e))};
  return {.value = r.value};
}

}  // namespace

std::optional<int64_t> detail::FoldBinary(ExprOp op, int64_t a, int64_t b) {
  return ApplyBinary(op, a, b).value;
}

base::Result<int64_t> Evaluate(const Expr& e, const Assignment& at) {
  Evaluated r = EvalNode(e, at);
  if (!r.value) return base::Status::Error(std::move(r.error));
  return *r.value;
}

std::optional<int64_t> ValueAt(const Expr& e, const Assignment& at) {
  return EvalNode(e, at).value;
}

}  // namespace loadplan::expr
