// Expr construction, variable queries, substitution and assignment formatting.
#include <string>
#include <utility>

#include <fmt/format.h>

#include "expr/expr.h"

namespace loadplan::expr {

Expr Expr::Const(int64_t v) { return Expr{.op = ExprOp::kConst, .value = v}; }

Expr Expr::Var(std::string n) { return Expr{.op = ExprOp::kVar, .name = std::move(n)}; }

Expr Expr::Binary(ExprOp op, Expr a, Expr b) {
  Expr e{.op = op};
  e.args.reserve(2);
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return e;
}

Expr operator+(Expr a, Expr b) { return Expr::Binary(ExprOp::kAdd, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return Expr::Binary(ExprOp::kSub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return Expr::Binary(ExprOp::kMul, std::move(a), std::move(b)); }

Expr operator-(Expr a) {
  Expr e{.op = ExprOp::kNeg};
  e.args.push_back(std::move(a));
  return e;
}

namespace {
void CollectVariables(const Expr& e, std::set<std::string>& out) {
  if (e.op == ExprOp::kVar) out.insert(e.name);
  for (const Expr& a : e.args) CollectVariables(a, out);
}
}  // namespace

std::set<std::string> Variables(const Expr& e) {
  std::set<std::string> out;
  CollectVariables(e, out);
  return out;
}

bool IsVariableFree(const Expr& e) {
  if (e.op == ExprOp::kVar) return false;
  for (const Expr& a : e.args) {
    if (!IsVariableFree(a)) return false;
  }
  return true;
}

Expr Substitute(const Expr& e, const std::map<std::string, Expr>& bindings) {
  if (e.op == ExprOp::kVar) {
    auto it = bindings.find(e.name);
    return it == bindings.end() ? e : it->second;
  }
  Expr out{.op = e.op, .value = e.value, .name = e.name};
  out.args.reserve(e.args.size());
  for (const Expr& a : e.args) out.args.push_back(Substitute(a, bindings));
  return out;
}

std::string FormatAssignment(const Assignment& a) {
  std::string out;
  for (const auto& [name, value] : a) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}={}", name, value);
  }
  return out;
}

}  // namespace loadplan::expr
