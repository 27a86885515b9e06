// Polynomials over atoms (variables and opaque / % ceil_div min max nodes), for Simplify
// and the proof transformations built on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "expr/expr.h"

namespace loadplan::expr::detail {

using Monomial = std::map<std::string, int>;  // atom text -> power
using Poly = std::map<Monomial, int64_t>;     // monomial -> non-zero coefficient
inline constexpr size_t kMaxTerms = 4096;

// Adds c * m with checked arithmetic; false on overflow or too many terms.
bool AddTerm(Poly& p, const Monomial& m, int64_t c);
int Degree(const Monomial& m);

// Converts between expressions and polynomials, remembering each atom's expression.
class Normaliser {
 public:
  std::optional<Poly> ToPoly(const Expr& e);
  Expr FromPoly(const Poly& p) const;
  // kAdd, kSub or kMul of two polynomials; nullopt on overflow.
  std::optional<Poly> Combine(ExprOp op, const Poly& a, const Poly& b);
  std::optional<Poly> AtomPoly(Expr atom);
  const Expr& Atom(const std::string& key) const { return atoms_.at(key); }

 private:
  std::optional<Poly> Opaque(const Expr& e);
  Expr Term(const Monomial& m, int64_t c) const;

  std::map<std::string, Expr> atoms_;
};

// e = factor * cofactor with `factor` the largest monomial dividing every term of
// Simplify(e) (nullopt when that is 1).
struct Factored {
  Expr factor;
  Expr cofactor;
};
std::optional<Factored> FactorCommonMonomial(const Expr& e);

// Removes the division atoms floor(a/c), ceil(a/c), a % c (constant c >= 2) from a
// polynomial: L * e equals `scaled` once fresh remainder variables r (named "%r0", ...,
// listed in `remainders` with ranges that enclose their values over `box`) are bound:
// c * floor(a/c) = a - r and a % c = r with r = a mod c; c * ceil(a/c) = a + r with
// r = (-a) mod c. L > 0, so min(scaled) >= 0 over box x remainders proves e >= 0.
// Needs every monomial to hold at most one such atom, to the first power.
struct Relaxed {
  Expr scaled;
  Box remainders;
};
std::optional<Relaxed> RelaxDivisions(const Expr& e, const Box& box);

}  // namespace loadplan::expr::detail
