// Tests of FindExtrema, ProveLessEq and ProveEvaluates against brute force.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/expr/expr_generators.h"
#include "expr/expr.h"

namespace loadplan::expr {
namespace {

using testing::AllPoints;
using testing::GenExpr;
using testing::GenSmallBox;

constexpr int64_t k40 = int64_t{1} << 40;

Expr P(std::string_view text) {
  base::Result<Expr> r = ParseExpr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : Expr{};
}

const Box kServing{{"batch", {1, 256}}, {"ctx", {1, 131072}}};

TEST(ExprExtrema, MonotoneProductAtTheCorners) {
  Extrema x = FindExtrema(P("batch * ctx * 2 + 4096"), kServing);
  ASSERT_TRUE(x.min && x.max) << x.error.message();
  EXPECT_TRUE(x.min->exact && x.max->exact);
  EXPECT_EQ(x.min->value, 4098);
  EXPECT_EQ(x.max->value, 256 * 131072 * 2 + 4096);
  EXPECT_EQ(x.max->at, (Assignment{{"batch", 256}, {"ctx", 131072}}));
  EXPECT_EQ(x.min->at, (Assignment{{"batch", 1}, {"ctx", 1}}));
}

TEST(ExprExtrema, DecreasingAndRoundedTerms) {
  Extrema x = FindExtrema(P("ceil_div(ctx, 256) * 256 * batch - batch / 2"), kServing);
  ASSERT_TRUE(x.min && x.max) << x.error.message();
  EXPECT_TRUE(x.max->exact);
  EXPECT_EQ(x.max->value, 131072 * 256 - 128);
  EXPECT_EQ(x.min->value, 256);
  Extrema y = FindExtrema(P("1000000 / batch"), kServing);
  ASSERT_TRUE(y.max && y.min);
  EXPECT_EQ(y.max->at.at("batch"), 1);
  EXPECT_EQ(y.min->value, 1000000 / 256);
}

TEST(ExprExtrema, NonMonotone) {
  Extrema x = FindExtrema(P("x * (10 - x)"), Box{{"x", {0, 10}}});
  ASSERT_TRUE(x.min && x.max);
  EXPECT_TRUE(x.max->exact);
  EXPECT_EQ(x.max->value, 25);
  EXPECT_EQ(x.max->at, (Assignment{{"x", 5}}));
  EXPECT_EQ(x.min->value, 0);
  Extrema m = FindExtrema(P("x % 7"), Box{{"x", {0, 100}}});
  ASSERT_TRUE(m.max && m.min);
  EXPECT_EQ(m.max->value, 6);
  EXPECT_EQ(m.min->value, 0);
  // A wide parabola: forward differences fix the monotone halves.
  Extrema w = FindExtrema(P("x * (1073741824 - x)"), Box{{"x", {0, int64_t{1} << 30}}});
  ASSERT_TRUE(w.max);
  EXPECT_TRUE(w.max->exact);
  EXPECT_EQ(w.max->value, int64_t{1} << 58);
  EXPECT_EQ(w.max->at.at("x"), int64_t{1} << 29);
}

TEST(ExprExtrema, AtomsTheBoxDecides) {
  Box b{{"batch", {1, 256}}, {"ctx", {1, 131072}}, {"n", {0, k40}}};
  Extrema x = FindExtrema(P("batch * (ctx - min(ctx, 4096))"), b);
  ASSERT_TRUE(x.min && x.max);
  EXPECT_TRUE(x.min->exact);
  EXPECT_EQ(x.min->value, 0);
  EXPECT_EQ(x.max->value, 256 * (131072 - 4096));
  Extrema m = FindExtrema(P("n % 4096 + batch"), b);
  ASSERT_TRUE(m.max);
  EXPECT_TRUE(m.max->exact);
  EXPECT_EQ(m.max->value, 4095 + 256);
}

TEST(ExprExtrema, ReportsEvaluationErrorsWithAWitness) {
  Extrema x = FindExtrema(P("a * b"), Box{{"a", {0, k40}}, {"b", {0, k40}}});
  EXPECT_FALSE(x.min || x.max);
  EXPECT_NE(x.error.message().find("overflow"), std::string::npos);
  EXPECT_FALSE(ValueAt(P("a * b"), x.at));
  Extrema d = FindExtrema(P("100 / (x - 37)"), Box{{"x", {0, 1000}}});
  EXPECT_NE(d.error.message().find("division by zero"), std::string::npos);
  EXPECT_EQ(d.at, (Assignment{{"x", 37}}));
}

TEST(ExprExtrema, BudgetGivesASoundInexactBound) {
  Extrema x = FindExtrema(P("x * (10 - x)"), Box{{"x", {0, 10}}}, ProofBudget{.max_boxes = 1});
  ASSERT_TRUE(x.max);
  EXPECT_FALSE(x.max->exact);
  EXPECT_GE(x.max->value, 25);
}

TEST(ExprExtrema, EmptyBoxAndUnusedVariables) {
  Extrema c = FindExtrema(P("6 * 7"), {});
  ASSERT_TRUE(c.min && c.max);
  EXPECT_EQ(c.min->value, 42);
  EXPECT_TRUE(c.max->exact);
  Extrema u = FindExtrema(P("x"), Box{{"x", {3, 9}}, {"y", {5, 6}}});
  ASSERT_TRUE(u.max);
  EXPECT_EQ(u.max->at, (Assignment{{"x", 9}, {"y", 5}}));
  EXPECT_FALSE(FindExtrema(P("x + z"), Box{{"x", {3, 9}}}).error.ok());
}

TEST(ExprProve, CancellationNeedsNoSearch) {
  ProofBudget one{.max_boxes = 1};
  Box wide{{"a", {0, k40}}, {"b", {0, 1 << 20}}, {"x", {0, k40}}};
  EXPECT_EQ(ProveLessEq(P("a * b"), P("a * b"), wide, one).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("2 * x"), P("x + x"), wide, one).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("b * a + 1"), P("a * b + x"),
                        Box{{"a", {0, k40}}, {"b", {0, 9}}, {"x", {1, k40}}}, one)
                .truth,
            Truth::kTrue);
}

TEST(ExprProve, ServingBoxes) {
  EXPECT_EQ(ProveLessEq(P("batch * ctx * 2"), P("67108864"), kServing).truth, Truth::kTrue);
  Proof p = ProveLessEq(P("batch * ctx * 2"), P("67108863"), kServing);
  ASSERT_EQ(p.truth, Truth::kFalse);
  EXPECT_EQ(p.witness, (Assignment{{"batch", 256}, {"ctx", 131072}}));
  EXPECT_EQ(p.lhs_at, 67108864);
  EXPECT_EQ(p.rhs_at, 67108863);
  EXPECT_EQ(FormatAssignment(p.witness), "batch=256, ctx=131072");
  EXPECT_EQ(ProveLessEq(P("ceil_div(ctx, 256) * 256"), P("ctx + 255"), kServing).truth,
            Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("ctx"), P("ceil_div(ctx, 256) * 256"), kServing).truth, Truth::kTrue);
  Proof q = ProveLessEq(P("ceil_div(ctx, 256) * 256"), P("ctx + 254"), kServing);
  ASSERT_EQ(q.truth, Truth::kFalse);
  EXPECT_EQ(q.witness.at("ctx") % 256, 1);
  EXPECT_EQ(ProveLessEq(P("min(batch, 64) * ctx"), P("64 * ctx"), kServing).truth, Truth::kTrue);
}

TEST(ExprProve, NonMonotoneAndBudget) {
  Box x10{{"x", {0, 10}}};
  EXPECT_EQ(ProveLessEq(P("x * (10 - x)"), P("25"), x10).truth, Truth::kTrue);
  Proof p = ProveLessEq(P("x * (10 - x)"), P("24"), x10);
  ASSERT_EQ(p.truth, Truth::kFalse);
  EXPECT_EQ(p.witness, (Assignment{{"x", 5}}));
  EXPECT_EQ(ProveLessEq(P("x * (10 - x)"), P("25"), x10, ProofBudget{.max_boxes = 1}).truth,
            Truth::kUnknown);
  Box x100{{"x", {0, 100}}};
  EXPECT_EQ(ProveLessEq(P("x % 7"), P("6"), x100).truth, Truth::kTrue);
  Proof m = ProveLessEq(P("x % 7"), P("5"), x100);
  ASSERT_EQ(m.truth, Truth::kFalse);
  EXPECT_EQ(m.witness.at("x") % 7, 6);
  Box x30{{"x", {0, int64_t{1} << 30}}};
  EXPECT_EQ(ProveLessEq(P("x * (1073741824 - x)"), P("288230376151711744"), x30).truth,
            Truth::kTrue);
  Proof w = ProveLessEq(P("x * (1073741824 - x)"), P("288230376151711743"), x30);
  ASSERT_EQ(w.truth, Truth::kFalse);
  EXPECT_EQ(w.witness, (Assignment{{"x", int64_t{1} << 29}}));
}

TEST(ExprProve, AlignmentOverWideRanges) {
  Box n40{{"n", {0, k40}}};
  EXPECT_EQ(ProveLessEq(P("(n + 7) / 8 * 8"), P("n + 7"), n40).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("n"), P("ceil_div(n, 256) * 256"), n40).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("ceil_div(n, 256) * 256"), P("n + 255"), n40).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("n"), P("n / 3 * 3 + n % 3"), n40).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("n / 3 + n / 3 + n / 3"), P("n"), n40).truth, Truth::kTrue);
  Proof p = ProveLessEq(P("n"), P("n / 3 * 3 + 1"), n40);
  ASSERT_EQ(p.truth, Truth::kFalse);
  EXPECT_EQ(p.witness.at("n") % 3, 2);
  Box serving{{"batch", {1, 256}}, {"heads", {1, 128}}, {"ctx", {1, 131072}}};
  EXPECT_EQ(ProveLessEq(P("ceil_div(ctx, 256) * 256 * batch * heads"),
                        P("(ctx + 255) * batch * heads"), serving)
                .truth,
            Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("batch * (ctx - min(ctx, 4096))"), P("batch * ctx"), serving).truth,
            Truth::kTrue);
}

TEST(ExprProve, EvaluationFailuresAreFalse) {
  Proof p = ProveLessEq(P("a * b"), P("a * b + 1"), Box{{"a", {0, k40}}, {"b", {0, k40}}});
  ASSERT_EQ(p.truth, Truth::kFalse);
  EXPECT_NE(p.error.message().find("overflow"), std::string::npos);
  Proof u = ProveLessEq(P("x"), P("3"), {});
  ASSERT_EQ(u.truth, Truth::kFalse);
  EXPECT_NE(u.error.message().find("unbound variable x"), std::string::npos);
  Proof e = ProveLessEq(P("x"), P("3"), Box{{"x", {4, 3}}});
  EXPECT_EQ(e.truth, Truth::kUnknown);
  EXPECT_FALSE(e.error.ok());
  EXPECT_EQ(ProveLessEq(P("3"), P("4"), {}).truth, Truth::kTrue);
  EXPECT_EQ(ProveLessEq(P("5"), P("4"), {}).truth, Truth::kFalse);
}

TEST(ExprProve, Evaluates) {
  Box wide{{"a", {0, k40}}, {"b", {0, k40}}};
  Proof p = ProveEvaluates(P("a * b"), wide);
  ASSERT_EQ(p.truth, Truth::kFalse);
  EXPECT_FALSE(ValueAt(P("a * b"), p.witness));
  EXPECT_EQ(ProveEvaluates(P("a * 1024 + b / 3"), wide).truth, Truth::kTrue);
  Proof d = ProveEvaluates(P("x / (x - 513)"), Box{{"x", {0, 100000}}});
  ASSERT_EQ(d.truth, Truth::kFalse);
  EXPECT_EQ(d.witness, (Assignment{{"x", 513}}));
  EXPECT_NE(d.error.message().find("division by zero"), std::string::npos);
  EXPECT_EQ(ProveEvaluates(P("1 / 0"), {}).truth, Truth::kFalse);
  EXPECT_EQ(ProveEvaluates(P("batch * ctx * 8192 * 2"), kServing).truth, Truth::kTrue);
  EXPECT_EQ(ProveEvaluates(P("x / (x - 513)"), Box{{"x", {0, 100000}}}, ProofBudget{.max_boxes = 2})
                .truth,
            Truth::kUnknown);
}

// Brute force over every point of a small box.
struct Oracle {
  bool any_error = false;
  std::optional<int64_t> min, max;
};

Oracle BruteForce(const Expr& e, const Box& box) {
  Oracle o;
  for (const Assignment& at : AllPoints(box)) {
    std::optional<int64_t> r = ValueAt(e, at);
    if (!r) {
      o.any_error = true;
      continue;
    }
    o.min = std::min(o.min.value_or(*r), *r);
    o.max = std::max(o.max.value_or(*r), *r);
  }
  return o;
}

void CheckExtremaAgainstBruteForce(const Expr& e, const Box& box) {
  Oracle o = BruteForce(e, box);
  Extrema x = FindExtrema(e, box);
  if (o.any_error) {
    RC_ASSERT(!x.error.ok());
    RC_ASSERT(!ValueAt(e, x.at));
    return;
  }
  RC_ASSERT(x.error.ok());
  RC_ASSERT(x.min && x.max);
  RC_ASSERT(x.min->exact && x.max->exact);
  RC_ASSERT(x.min->value == *o.min);
  RC_ASSERT(x.max->value == *o.max);
  RC_ASSERT(ValueAt(e, x.min->at) == o.min);
  RC_ASSERT(ValueAt(e, x.max->at) == o.max);
}

RC_GTEST_PROP(ExprExtrema, ExactExtremaEqualBruteForce, ()) {
  CheckExtremaAgainstBruteForce(*GenExpr(3), *GenSmallBox());
}

RC_GTEST_PROP(ExprExtrema, ExactExtremaEqualBruteForceWithEdgeConstants, ()) {
  CheckExtremaAgainstBruteForce(*GenExpr(3, true), *GenSmallBox());
}

RC_GTEST_PROP(ExprExtrema, ExactPolynomialExtremaEqualBruteForce, ()) {
  CheckExtremaAgainstBruteForce(*GenExpr(3, false, true), *GenSmallBox());
}

// lhs <= rhs at every point, both sides evaluating: the meaning of kTrue.
bool HoldsEverywhere(const Expr& lhs, const Expr& rhs, const Box& box) {
  for (const Assignment& at : AllPoints(box)) {
    std::optional<int64_t> l = ValueAt(lhs, at), r = ValueAt(rhs, at);
    if (!l || !r || *l > *r) return false;
  }
  return true;
}

bool Violates(const Proof& p, const Expr& lhs, const Expr& rhs) {
  std::optional<int64_t> l = ValueAt(lhs, p.witness), r = ValueAt(rhs, p.witness);
  if (!l || !r) return !p.error.ok();
  // Both sides evaluate there: a plain counterexample, whose error stays ok.
  return *l > *r && p.lhs_at == l && p.rhs_at == r && p.error.ok();
}

RC_GTEST_PROP(ExprProve, LessEqAgreesWithBruteForce, ()) {
  bool wide = *rc::gen::arbitrary<bool>();
  Expr lhs = *GenExpr(3, wide);
  Expr rhs = *GenExpr(3, wide);
  Box box = *GenSmallBox();
  Proof p = ProveLessEq(lhs, rhs, box);
  bool holds = HoldsEverywhere(lhs, rhs, box);
  RC_ASSERT(p.truth == (holds ? Truth::kTrue : Truth::kFalse));
  if (!holds) RC_ASSERT(Violates(p, lhs, rhs));
}

RC_GTEST_PROP(ExprProve, EvaluatesAgreesWithBruteForce, ()) {
  Expr e = *GenExpr(3, true);
  Box box = *GenSmallBox();
  Proof p = ProveEvaluates(e, box);
  RC_ASSERT(p.truth == (BruteForce(e, box).any_error ? Truth::kFalse : Truth::kTrue));
  if (p.truth == Truth::kFalse) RC_ASSERT(!ValueAt(e, p.witness));
}

// Wide boxes cannot be enumerated: kTrue must survive random points, kFalse must verify.
RC_GTEST_PROP(ExprProve, SoundOnWideBoxes, ()) {
  bool wide = *rc::gen::arbitrary<bool>();
  Expr lhs = *GenExpr(3, wide);
  Expr rhs = *GenExpr(3, wide);
  Box box = *testing::GenWideBox();
  Proof p = ProveLessEq(lhs, rhs, box, ProofBudget{.max_boxes = 64});
  if (p.truth == Truth::kFalse) RC_ASSERT(Violates(p, lhs, rhs));
  if (p.truth != Truth::kTrue) return;
  for (int i = 0; i < 8; ++i) {
    Assignment at = testing::PickPoint(box);
    std::optional<int64_t> l = ValueAt(lhs, at), r = ValueAt(rhs, at);
    RC_ASSERT(l && r && *l <= *r);
  }
}

}  // namespace
}  // namespace loadplan::expr
