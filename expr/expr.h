// Integer size expressions over variables: parse, print, exact checked evaluation,
// interval bounds over a variable box, extrema and proofs of lhs <= rhs.
//
// Variables are non-negative integers within [min, max] (inclusive). `/` and `%`
// are floor division / remainder on non-negatives; a division by zero or a
// result outside int64 is an evaluation error, never undefined behaviour.
// Grammar (precedence low -> high):
//   expr   := term (('+' | '-') term)*
//   term   := unary (('*' | '/' | '%') unary)*
//   unary  := '-' unary | atom
//   atom   := INT | NAME | NAME '(' expr ',' expr ')' | '(' expr ')'
// where NAME '(' ... ')' is one of ceil_div, min, max. NAME is [A-Za-z_][A-Za-z0-9_.]*.
//
// Decisions (implementation in expr/):
// - A '-' directly followed by an integer literal parses as one negative constant:
//   "-3" is Const(-3) (so INT64_MIN is writable), while Neg(Const(3)) prints "-(3)".
// - Operands of any sign are allowed: `/` and `%` use floor semantics (the remainder
//   takes the divisor's sign), ceil_div(a, b) is the mathematical ceiling of a / b.
// - Parsing rejects nesting deeper than kMaxExprNesting and trees deeper than
//   kMaxExprDepth, so hostile text cannot exhaust the stack of the recursive passes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace loadplan::expr {

enum class ExprOp : uint8_t {
  kConst,
  kVar,
  kNeg,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kCeilDiv,
  kMin,
  kMax
};

// A value-type AST. kConst uses `value`, kVar uses `name`, kNeg one arg, others two.
struct Expr {
  ExprOp op = ExprOp::kConst;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> args;
  bool operator==(const Expr&) const = default;

  static Expr Const(int64_t v);
  static Expr Var(std::string n);
  static Expr Binary(ExprOp op, Expr a, Expr b);
  [[nodiscard]] bool IsConst() const { return op == ExprOp::kConst; }
};

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator-(Expr a);  // kNeg

inline constexpr int kMaxExprNesting = 256;  // parentheses, unary minus, calls
inline constexpr int kMaxExprDepth = 1000;   // depth of the parsed tree

// The parsed tree, or an error ("unexpected ')' at column 4") whose place() carries the
// 0-based column as its offset (the name empty: the text itself).
base::Result<Expr> ParseExpr(std::string_view text);

// Canonical text with minimal parentheses; ParseExpr(ToString(e)) == e for every
// tree whose variable names match NAME. Binary operators are spaced: "a * (b + 1)".
std::string ToString(const Expr& e);

std::set<std::string> Variables(const Expr& e);
bool IsVariableFree(const Expr& e);
// Replaces each variable found in `bindings`; others stay.
Expr Substitute(const Expr& e, const std::map<std::string, Expr>& bindings);
// Normalises + - * parts to a sum of monomials with cancelled coefficients;
// / % ceil_div min max become atoms over simplified arguments. Constants fold.
// Monomials are ordered by degree (highest first) then text; the constant comes last.
// Where e evaluates, Simplify(e) has the same value (it may drop an atom whose
// coefficient cancels to 0). On coefficient overflow or more than 4096 monomials
// it returns e unchanged. Idempotent.
Expr Simplify(const Expr& e);
// The sum of `terms`, simplified (the same expression as Simplify(t0 + t1 + ...)), normalised
// one term at a time: O(n log m) for n terms and m monomials, never an n-deep tree. When the
// normalisation gives up (overflow, more than 4096 monomials), the unsimplified sum: a
// left-leaning chain while it stays within kMaxExprDepth, a balanced tree (depth log2 n above
// the deepest term) beyond, so no recursive pass sees a tree as deep as the term count.
Expr Sum(const std::vector<Expr>& terms);

using Assignment = std::map<std::string, int64_t>;

// The value, or the error that stops it: "overflow in a * b", "division by zero in a / b",
// "unbound variable x".
base::Result<int64_t> Evaluate(const Expr& e, const Assignment& at);
// The value, or nullopt where Evaluate fails (for callers that need no reason).
std::optional<int64_t> ValueAt(const Expr& e, const Assignment& at);

struct Range {
  int64_t min = 0;
  int64_t max = 0;  // inclusive
  bool operator==(const Range&) const = default;
};
using Box = std::map<std::string, Range>;

// Sound enclosure of e over the box, by interval arithmetic: every value e takes at a
// point of the box where it evaluates lies inside (points where a divisor is 0 are
// excluded). nullopt when an intermediate bound leaves int64 (that is not proof that
// a point overflows), or a divisor is 0 everywhere. Unbound variables: nullopt.
std::optional<Range> IntervalBounds(const Expr& e, const Box& box);

struct ProofBudget {
  int max_boxes = 4096;  // sub-boxes examined by interval splitting
};

enum class Truth : uint8_t { kTrue, kFalse, kUnknown };

// Exact extremum when found (monotone: corner evaluation; else by splitting within
// budget); otherwise `exact` is false and value is a sound bound (nullopt when no
// bound fits int64). `exact` also needs a proof that e evaluates everywhere; when an
// evaluation error is found, `error` and `at` name it and min/max are nullopt.
// Assignments (here and in Proof) bind every variable of the box.
struct Extremum {
  int64_t value = 0;
  Assignment at;  // where it is reached (when exact)
  bool exact = false;
};
struct Extrema {
  std::optional<Extremum> min, max;
  base::Status error;  // an evaluation error (overflow, division by zero), its witness in `at`
  Assignment at;
};
Extrema FindExtrema(const Expr& e, const Box& box, const ProofBudget& budget = {});

// Does lhs <= rhs hold for every point of the box? Both sides are first
// simplified and cancelled as polynomials (so a*b <= a*b proves without search),
// then corner evaluation where monotone, then interval splitting.
// Sufficient side conditions are tried first, each within min(budget, 64) boxes: the
// difference's common monomial factor (when its sign is known) and the division
// relaxation c * floor(a / c) = a - r, r in [0, c - 1], so alignment such as
// `(n + 7) / 8 * 8 <= n + 7` proves over n in [0, 2^40].
// kTrue means: both sides evaluate without error at every point AND lhs <= rhs there.
// kFalse: a verified witness where lhs > rhs, or where a side fails to evaluate.
// A variable of lhs/rhs missing from the box fails everywhere (kFalse).
// A box with min > max for some variable gives kUnknown with `error` set.
struct Proof {
  Truth truth = Truth::kUnknown;
  Assignment witness;  // for kFalse: a point where lhs > rhs (or evaluation fails)
  std::optional<int64_t> lhs_at, rhs_at;  // values at the witness
  base::Status error;  // the evaluation error at the witness, if that is why it fails
};
Proof ProveLessEq(const Expr& lhs, const Expr& rhs, const Box& box, const ProofBudget& budget = {});

// Does e evaluate without error (overflow, division by zero) at every point of the box?
// kFalse carries a witness and the error.
Proof ProveEvaluates(const Expr& e, const Box& box, const ProofBudget& budget = {});

std::string FormatAssignment(const Assignment& a);  // "batch=256, ctx=1"

}  // namespace loadplan::expr
