// Simplify: normalise + - * to a cancelled sum of monomials over variables and opaque atoms.
//
// An atom is a variable or a / % ceil_div min max node over simplified arguments, keyed
// by its canonical text. A polynomial maps monomials (atom text -> power) to non-zero
// int64 coefficients; every coefficient operation is checked and any overflow (or more
// than kMaxTerms monomials) abandons the normalisation.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "expr/expr.h"
#include "expr/arith.h"
#include "expr/internal.h"
#include "expr/poly.h"

namespace loadplan::expr::detail {

bool AddTerm(Poly& p, const Monomial& m, int64_t c) {
  int64_t& slot = p[m];
  std::optional<int64_t> sum = CheckedAdd(slot, c);
  if (!sum) return false;
  slot = *sum;
  if (slot == 0) p.erase(m);
  return p.size() <= kMaxTerms;
}

std::optional<Poly> Normaliser::AtomPoly(Expr atom) {
  std::string key = ToString(atom);
  atoms_.emplace(key, std::move(atom));
  return Poly{{Monomial{{key, 1}}, 1}};
}

std::optional<Poly> Normaliser::Opaque(const Expr& e) {
  Expr a = Simplify(e.args[0]);
  Expr b = Simplify(e.args[1]);
  if (a.IsConst() && b.IsConst()) {
    std::optional<int64_t> v = FoldBinary(e.op, a.value, b.value);
    if (v) return ToPoly(Expr::Const(*v));
  }
  bool by_one = b.IsConst() && b.value == 1;
  if (by_one && (e.op == ExprOp::kDiv || e.op == ExprOp::kCeilDiv)) return ToPoly(a);
  if (by_one && e.op == ExprOp::kMod) return Poly{};
  if (a == b && (e.op == ExprOp::kMin || e.op == ExprOp::kMax)) return ToPoly(a);
  return AtomPoly(Expr::Binary(e.op, std::move(a), std::move(b)));
}

std::optional<Poly> Normaliser::Combine(ExprOp op, const Poly& a, const Poly& b) {
  Poly out = a;
  if (op == ExprOp::kAdd || op == ExprOp::kSub) {
    for (const auto& [m, c] : b) {
      std::optional<int64_t> cc = op == ExprOp::kAdd ? c : CheckedSub(0, c);
      if (!cc || !AddTerm(out, m, *cc)) return std::nullopt;
    }
    return out;
  }
  out.clear();
  for (const auto& [ma, ca] : a) {
    for (const auto& [mb, cb] : b) {
      Monomial m = ma;
      for (const auto& [atom, power] : mb) m[atom] += power;
      std::optional<int64_t> c = CheckedMul(ca, cb);
      if (!c || !AddTerm(out, m, *c)) return std::nullopt;
    }
  }
  return out;
}

std::optional<Poly> Normaliser::ToPoly(const Expr& e) {
  switch (e.op) {
    case ExprOp::kConst: return e.value == 0 ? Poly{} : Poly{{Monomial{}, e.value}};
    case ExprOp::kVar: return AtomPoly(e);
    case ExprOp::kNeg: {
      std::optional<Poly> a = ToPoly(e.args[0]);
      if (!a) return std::nullopt;
      return Combine(ExprOp::kSub, Poly{}, *a);
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul: {
      std::optional<Poly> a = ToPoly(e.args[0]);
      if (!a) return std::nullopt;
      std::optional<Poly> b = ToPoly(e.args[1]);
      if (!b) return std::nullopt;
      return Combine(e.op, *a, *b);
    }
    default: return Opaque(e);
  }
}

// c * m with the coefficient folded in: "x * y", "-x * y", "3 * x * y", "-3".
Expr Normaliser::Term(const Monomial& m, int64_t c) const {
  if (m.empty()) return Expr::Const(c);
  std::optional<Expr> acc;
  if (c != 1 && c != -1) acc = Expr::Const(c);
  for (const auto& [key, power] : m) {
    for (int i = 0; i < power; ++i) {
      Expr f = atoms_.at(key);
      if (!acc) {
        acc = c == -1 ? -std::move(f) : std::move(f);
      } else {
        acc = std::move(*acc) * std::move(f);
      }
    }
  }
  return *acc;
}

int Degree(const Monomial& m) {
  int d = 0;
  for (const auto& [key, power] : m) d += power;
  return d;
}

Expr Normaliser::FromPoly(const Poly& p) const {
  std::vector<std::pair<Monomial, int64_t>> terms(p.begin(), p.end());
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& x, const auto& y) { return Degree(x.first) > Degree(y.first); });
  if (terms.empty()) return Expr::Const(0);
  Expr acc = Term(terms[0].first, terms[0].second);
  for (size_t i = 1; i < terms.size(); ++i) {
    auto [m, c] = terms[i];
    if (c < 0 && c != kI64Min) {
      acc = std::move(acc) - Term(m, -c);
    } else {
      acc = std::move(acc) + Term(m, c);
    }
  }
  return acc;
}

}  // namespace loadplan::expr::detail

namespace loadplan::expr {

Expr Simplify(const Expr& e) {
  detail::Normaliser n;
  std::optional<detail::Poly> p = n.ToPoly(e);
  if (!p) return e;
  return n.FromPoly(*p);
}

namespace {

// t[0] + t[1] + ... unsimplified: the parser's left-leaning shape while it is shallow enough to
// reparse, halves summed recursively (recursion depth log2 n) beyond.
Expr UnsimplifiedSum(std::span<const Expr> t) {
  if (t.empty()) return Expr::Const(0);
  if (t.size() > static_cast<size_t>(kMaxExprDepth) / 2) {
    const size_t mid = t.size() / 2;
    return UnsimplifiedSum(t.first(mid)) + UnsimplifiedSum(t.subspan(mid));
  }
  Expr acc = t[0];
  for (size_t i = 1; i < t.size(); ++i) acc = std::move(acc) + t[i];
  return acc;
}

}  // namespace

Expr Sum(const std::vector<Expr>& terms) {
  detail::Normaliser n;
  detail::Poly acc;
  for (const Expr& t : terms) {
    std::optional<detail::Poly> p = n.ToPoly(t);
    if (!p) return UnsimplifiedSum(terms);
    for (const auto& [m, c] : *p) {
      if (!detail::AddTerm(acc, m, c)) return UnsimplifiedSum(terms);
    }
  }
  return n.FromPoly(acc);
}

}  // namespace loadplan::expr
