// RapidCheck generators for size expressions, boxes and points, plus brute-force oracles.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "expr/expr.h"

namespace loadplan::expr {
// Readable gtest output for ranges.
inline void PrintTo(const Range& r, std::ostream* os) {
  *os << "[" << r.min << ", " << r.max << "]";
}
}  // namespace loadplan::expr

namespace loadplan::expr::testing {

inline const std::vector<std::string> kNames = {"a", "b", "c"};

// Small constants mostly; with `wide`, int64 extremes and large powers of two too.
inline rc::Gen<Expr> GenLeaf(bool wide) {
  auto small =
      rc::gen::map(rc::gen::inRange<int64_t>(-3, 11), [](int64_t v) { return Expr::Const(v); });
  auto var = rc::gen::map(rc::gen::elementOf(kNames),
                          [](std::string n) { return Expr::Var(std::move(n)); });
  if (!wide) return rc::gen::weightedOneOf<Expr>({{3, small}, {4, var}});
  auto edge =
      rc::gen::map(rc::gen::elementOf(std::vector<int64_t>{
                       std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                       int64_t{1} << 40, -(int64_t{1} << 40), 0}),
                   [](int64_t v) { return Expr::Const(v); });
  return rc::gen::weightedOneOf<Expr>({{3, small}, {4, var}, {1, edge}});
}

// With `polynomial`, only + - * and unary minus (the shapes monotonicity reasoning sees).
inline rc::Gen<Expr> GenExpr(int depth, bool wide = false, bool polynomial = false) {
  rc::Gen<Expr> leaf = GenLeaf(wide);
  if (depth == 0) return leaf;
  rc::Gen<Expr> sub = GenExpr(depth - 1, wide, polynomial);
  std::vector<ExprOp> all{ExprOp::kAdd, ExprOp::kSub,     ExprOp::kMul, ExprOp::kMul, ExprOp::kDiv,
                          ExprOp::kMod, ExprOp::kCeilDiv, ExprOp::kMin, ExprOp::kMax};
  std::vector<ExprOp> poly{ExprOp::kAdd, ExprOp::kSub, ExprOp::kMul, ExprOp::kMul};
  auto ops = rc::gen::elementOf(polynomial ? poly : all);
  auto binary = rc::gen::apply(
      [](ExprOp op, Expr a, Expr b) { return Expr::Binary(op, std::move(a), std::move(b)); }, ops,
      sub, sub);
  auto neg = rc::gen::map(sub, [](Expr a) { return -std::move(a); });
  return rc::gen::weightedOneOf<Expr>({{2, leaf}, {1, neg}, {5, binary}});
}

// A box over kNames with tiny ranges (at most 5 values each), biased to equal endpoints.
inline rc::Gen<Box> GenSmallBox() {
  auto range = rc::gen::apply(
      [](int64_t lo, int64_t width) {
        return Range{lo, lo + width};
      },
      rc::gen::inRange<int64_t>(0, 6), rc::gen::inRange<int64_t>(0, 5));
  return rc::gen::apply(
      [](Range a, Range b, Range c) {
        return Box{{"a", a}, {"b", b}, {"c", c}};
      },
      range, range, range);
}

// A box with ranges up to 2^40.
inline rc::Gen<Box> GenWideBox() {
  auto range = rc::gen::apply(
      [](int shift, int64_t lo) {
        int64_t hi = int64_t{1} << shift;
        return Range{std::min(lo, hi), hi};
      },
      rc::gen::inRange(0, 41), rc::gen::inRange<int64_t>(0, 300));
  return rc::gen::apply(
      [](Range a, Range b, Range c) {
        return Box{{"a", a}, {"b", b}, {"c", c}};
      },
      range, range, range);
}

// Every point of a box (boxes here hold at most a few hundred points).
inline std::vector<Assignment> AllPoints(const Box& box) {
  std::vector<Assignment> out{Assignment{}};
  for (const auto& [name, r] : box) {
    std::vector<Assignment> next;
    for (const Assignment& a : out) {
      for (int64_t v = r.min; v <= r.max; ++v) {
        Assignment b = a;
        b[name] = v;
        next.push_back(std::move(b));
      }
    }
    out = std::move(next);
  }
  return out;
}

// A random point of the box.
inline Assignment PickPoint(const Box& box) {
  Assignment a;
  for (const auto& [name, r] : box) a[name] = *rc::gen::inRange<int64_t>(r.min, r.max + 1);
  return a;
}

}  // namespace loadplan::expr::testing
