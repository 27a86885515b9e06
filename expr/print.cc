// Canonical printing of size expressions with minimal parentheses (round-trips via ParseExpr).
#include <string>

#include <fmt/format.h>

#include "expr/expr.h"

namespace loadplan::expr {
namespace {

// Binding strength: sums 1, products 2, unary minus (and negative literals) 3, atoms 4.
int Precedence(const Expr& e) {
  switch (e.op) {
    case ExprOp::kAdd:
    case ExprOp::kSub: return 1;
    case ExprOp::kMul:
    case ExprOp::kDiv:
    case ExprOp::kMod: return 2;
    case ExprOp::kNeg: return 3;
    case ExprOp::kConst: return e.value < 0 ? 3 : 4;
    default: return 4;
  }
}

const char* Symbol(ExprOp op) {
  switch (op) {
    case ExprOp::kAdd: return "+";
    case ExprOp::kSub: return "-";
    case ExprOp::kMul: return "*";
    case ExprOp::kDiv: return "/";
    case ExprOp::kMod: return "%";
    case ExprOp::kCeilDiv: return "ceil_div";
    case ExprOp::kMin: return "min";
    case ExprOp::kMax: return "max";
    default: return "?";
  }
}

void Print(const Expr& e, std::string& out);

void PrintWrapped(const Expr& e, bool parens, std::string& out) {
  if (parens) out += '(';
  Print(e, out);
  if (parens) out += ')';
}

void Print(const Expr& e, std::string& out) {
  switch (e.op) {
    case ExprOp::kConst: out += fmt::format("{}", e.value); return;
    case ExprOp::kVar: out += e.name; return;
    case ExprOp::kNeg: {
      // "-3" would re-parse as a negative literal, so a non-negative constant is wrapped.
      const Expr& a = e.args[0];
      out += '-';
      PrintWrapped(a, Precedence(a) < 3 || (a.IsConst() && a.value >= 0), out);
      return;
    }
    case ExprOp::kCeilDiv:
    case ExprOp::kMin:
    case ExprOp::kMax:
      out += Symbol(e.op);
      out += '(';
      Print(e.args[0], out);
      out += ", ";
      Print(e.args[1], out);
      out += ')';
      return;
    default: {
      // Left-associative: the right operand needs parentheses at equal precedence.
      int p = Precedence(e);
      PrintWrapped(e.args[0], Precedence(e.args[0]) < p, out);
      out += fmt::format(" {} ", Symbol(e.op));
      PrintWrapped(e.args[1], Precedence(e.args[1]) <= p, out);
      return;
    }
  }
}

}  // namespace

std::string ToString(const Expr& e) {
  std::string out;
  Print(e, out);
  return out;
}

}  // namespace loadplan::expr
