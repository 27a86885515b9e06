// Proof transformations on polynomials: common monomial factors and division relaxation.
//
// Interval arithmetic loses the link between a and floor(a / c), so `c * ceil(a / c)
// <= a + c - 1` cannot be shown by splitting when a ranges over 2^40 values. Writing
// c * floor(a / c) = a - r with a fresh r in [0, c - 1] turns such differences back
// into polynomials in which a cancels; factoring out a common monomial of known sign
// then leaves a small cofactor (batch * heads * (255 - r) -> 255 - r).
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "expr/arith.h"
#include "expr/internal.h"
#include "expr/poly.h"

namespace loadplan::expr::detail {
namespace {

constexpr int64_t kMaxScale = int64_t{1} << 40;

bool IsDivisionAtom(const Expr& e) {
  bool divides = e.op == ExprOp::kDiv || e.op == ExprOp::kCeilDiv || e.op == ExprOp::kMod;
  return divides && e.args[1].IsConst() && e.args[1].value >= 2 && e.args[1].value <= kMaxScale;
}

// The division atom of a monomial, if it has exactly one (to the first power); false
// when it has more.
bool FindDivision(const Normaliser& n, const Monomial& m, std::optional<std::string>& key) {
  key.reset();
  for (const auto& [k, power] : m) {
    if (!IsDivisionAtom(n.Atom(k))) continue;
    if (key || power > 1) return false;
    key = k;
  }
  return true;
}

// Builds the remainder variables and the scale L (lcm of the quotient divisors).
class Relaxer {
 public:
  Relaxer(Normaliser& n, const Box& box) : n_(n), box_(box) {}

  bool Register(const std::string& key) {
    const Expr& atom = n_.Atom(key);
    int64_t c = atom.args[1].value;
    if (atom.op != ExprOp::kMod) {
      int64_t g = std::gcd(scale_, c);
      std::optional<int64_t> l = CheckedMul(scale_ / g, c);
      if (!l || *l > kMaxScale) return false;
      scale_ = *l;
    }
    bool ceil = atom.op == ExprOp::kCeilDiv;
    std::string signature = fmt::format("{}|{}|{}", ceil, ToString(atom.args[0]), c);
    if (remainder_of_.contains(signature)) return true;
    std::string name = fmt::format("%r{}", remainder_of_.size());
    remainder_of_[signature] = name;
    Expr mod = Expr::Binary(ExprOp::kMod, ceil ? -atom.args[0] : atom.args[0], Expr::Const(c));
    Range r{0, c - 1};
    if (std::optional<Range> e = Enclose(mod, box_).range)
      r = Range{std::max(r.min, e->min), std::min(r.max, e->max)};
    remainders_[name] = r;
    return true;
  }

  // L * atom as a polynomial in the atom's dividend and its remainder variable.
  std::optional<Poly> Scaled(const std::string& key) {
    const Expr& atom = n_.Atom(key);
    int64_t c = atom.args[1].value;
    bool ceil = atom.op == ExprOp::kCeilDiv;
    std::string signature = fmt::format("{}|{}|{}", ceil, ToString(atom.args[0]), c);
    std::optional<Poly> r = n_.AtomPoly(Expr::Var(remainder_of_.at(signature)));
    if (atom.op == ExprOp::kMod) return n_.Combine(ExprOp::kMul, *r, Poly{{Monomial{}, scale_}});
    std::optional<Poly> a = n_.ToPoly(atom.args[0]);
    if (!a) return std::nullopt;
    std::optional<Poly> inner = n_.Combine(ceil ? ExprOp::kAdd : ExprOp::kSub, *a, *r);
    if (!inner) return std::nullopt;
    return n_.Combine(ExprOp::kMul, *inner, Poly{{Monomial{}, scale_ / c}});
  }

  int64_t scale() const { return scale_; }
  const Box& remainders() const { return remainders_; }

 private:
  Normaliser& n_;
  const Box& box_;
  int64_t scale_ = 1;
  std::map<std::string, std::string> remainder_of_;
  Box remainders_;
};

std::optional<Poly> RelaxTerm(Normaliser& n, Relaxer& rx, const Monomial& m, int64_t c) {
  std::optional<std::string> key;
  FindDivision(n, m, key);
  if (!key) return n.Combine(ExprOp::kMul, Poly{{m, c}}, Poly{{Monomial{}, rx.scale()}});
  Monomial rest = m;
  rest.erase(*key);
  std::optional<Poly> scaled = rx.Scaled(*key);
  if (!scaled) return std::nullopt;
  return n.Combine(ExprOp::kMul, Poly{{rest, c}}, *scaled);
}

}  // namespace

std::optional<Factored> FactorCommonMonomial(const Expr& e) {
  Normaliser n;
  std::optional<Poly> p = n.ToPoly(e);
  if (!p || p->empty()) return std::nullopt;
  Monomial common = p->begin()->first;
  for (const auto& [m, c] : *p) {
    for (auto it = common.begin(); it != common.end();) {
      auto found = m.find(it->first);
      int power = found == m.end() ? 0 : std::min(found->second, it->second);
      it = power == 0 ? common.erase(it) : (it->second = power, std::next(it));
    }
  }
  if (common.empty()) return std::nullopt;
  Poly q;
  for (const auto& [m, c] : *p) {
    Monomial rest = m;
    for (const auto& [k, power] : common) {
      if ((rest[k] -= power) == 0) rest.erase(k);
    }
    q[rest] = c;
  }
  return Factored{n.FromPoly(Poly{{common, 1}}), n.FromPoly(q)};
}

std::optional<Relaxed> RelaxDivisions(const Expr& e, const Box& box) {
  Normaliser n;
  std::optional<Poly> p = n.ToPoly(e);
  if (!p) return std::nullopt;
  Relaxer rx(n, box);
  bool any = false;
  for (const auto& [m, c] : *p) {
    std::optional<std::string> key;
    if (!FindDivision(n, m, key)) return std::nullopt;
    if (key && !rx.Register(*key)) return std::nullopt;
    any = any || key.has_value();
  }
  if (!any) return std::nullopt;
  Poly sum;
  for (const auto& [m, c] : *p) {
    std::optional<Poly> term = RelaxTerm(n, rx, m, c);
    if (!term) return std::nullopt;
    std::optional<Poly> next = n.Combine(ExprOp::kAdd, sum, *term);
    if (!next) return std::nullopt;
    sum = std::move(*next);
  }
  return Relaxed{n.FromPoly(sum), rx.remainders()};
}

}  // namespace loadplan::expr::detail
