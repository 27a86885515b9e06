// Tests of size-expression parsing, printing and exact evaluation.
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/expr/expr_generators.h"
#include "expr/expr.h"

namespace loadplan::expr {
namespace {

using testing::GenExpr;

Expr P(std::string_view text) {
  base::Result<Expr> r = ParseExpr(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? *r : Expr{};
}

// A parse as the tests read it: the tree, or the error's message and column (its place).
struct Parsed {
  std::optional<Expr> expr;
  std::string error;
  size_t column = 0;
};
Parsed Parse(std::string_view text) {
  base::Result<Expr> r = ParseExpr(text);
  if (r.ok()) return {.expr = *r};
  const std::optional<base::ErrorPlace>& place = r.status().place();
  EXPECT_TRUE(place.has_value() && place->name.empty()) << text;
  return {.error = r.status().message(), .column = place ? place->offset : text.size() + 1};
}

Expr V(const char* n) { return Expr::Var(n); }
Expr C(int64_t v) { return Expr::Const(v); }

TEST(ExprParse, PrecedenceAndAssociativity) {
  EXPECT_EQ(P("a + b * c"), V("a") + V("b") * V("c"));
  EXPECT_EQ(P("a - b - c"), (V("a") - V("b")) - V("c"));
  EXPECT_EQ(P("a - (b - c)"), V("a") - (V("b") - V("c")));
  EXPECT_EQ(P("a / b * c"), Expr::Binary(ExprOp::kDiv, V("a"), V("b")) * V("c"));
  EXPECT_EQ(P(" ( batch*ctx ) % 7 "), Expr::Binary(ExprOp::kMod, V("batch") * V("ctx"), C(7)));
  EXPECT_EQ(P("ceil_div(ctx, 256)"), Expr::Binary(ExprOp::kCeilDiv, V("ctx"), C(256)));
  EXPECT_EQ(P("min(a,max(b,1))"),
            Expr::Binary(ExprOp::kMin, V("a"), Expr::Binary(ExprOp::kMax, V("b"), C(1))));
  EXPECT_EQ(P("layer.0_dim"), V("layer.0_dim"));
  EXPECT_EQ(P("min"), V("min"));  // a function name without a call is a variable
}

TEST(ExprParse, NegativeLiteralsAndUnaryMinus) {
  EXPECT_EQ(P("-3"), C(-3));
  EXPECT_EQ(P("- 3"), C(-3));
  EXPECT_EQ(P("-(3)"), -C(3));
  EXPECT_EQ(P("--3"), -C(-3));
  EXPECT_EQ(P("-x * y"), -V("x") * V("y"));
  EXPECT_EQ(P("a - -3"), V("a") - C(-3));
  EXPECT_EQ(P("-9223372036854775808"), C(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(P("9223372036854775807"), C(std::numeric_limits<int64_t>::max()));
}

struct ParseErrorCase {
  const char* text;
  size_t column;
};

TEST(ExprParse, ErrorsNameTheColumn) {
  for (ParseErrorCase c : {ParseErrorCase{"", 0},
                           {"a +", 3},
                           {"a + )", 4},
                           {"1 2", 2},
                           {"(a", 2},
                           {"9223372036854775808", 0},
                           {"x - -9223372036854775809", 4},
                           {"foo(a, b)", 0},
                           {"min(a)", 5},
                           {"min(a, b, c)", 8},
                           {"a $ b", 2},
                           {"3x", 1},
                           {"ceil_div(a b)", 11}}) {
    Parsed r = Parse(c.text);
    EXPECT_FALSE(r.expr.has_value()) << c.text;
    EXPECT_FALSE(r.error.empty()) << c.text;
    EXPECT_EQ(r.column, c.column) << c.text << ": " << r.error;
  }
}

TEST(ExprParse, HostileNestingIsRejected) {
  std::string deep(300, '(');
  deep += "x" + std::string(300, ')');
  EXPECT_FALSE(ParseExpr(deep).ok());
  EXPECT_FALSE(ParseExpr(std::string(300, '-') + "x").ok());
  std::string chain = "x";
  for (int i = 0; i < 2000; ++i) chain += " + x";
  EXPECT_FALSE(ParseExpr(chain).ok());
  std::string longest = "x";
  for (int i = 0; i < 998; ++i) longest += " + x";
  EXPECT_EQ(ToString(Simplify(P(longest))), "999 * x");
  std::string fine(200, '(');
  fine += "x" + std::string(200, ')');
  EXPECT_EQ(P(fine), V("x"));
}

TEST(ExprPrint, MinimalParentheses) {
  EXPECT_EQ(ToString(P("a + (b * c)")), "a + b * c");
  EXPECT_EQ(ToString(P("(a + b) * c")), "(a + b) * c");
  EXPECT_EQ(ToString(P("a - (b + c)")), "a - (b + c)");
  EXPECT_EQ(ToString(P("(a - b) - c")), "a - b - c");
  EXPECT_EQ(ToString(P("a / (b / c)")), "a / (b / c)");
  EXPECT_EQ(ToString(P("a * (b % c)")), "a * (b % c)");
  EXPECT_EQ(ToString(-C(3)), "-(3)");
  EXPECT_EQ(ToString(C(-3)), "-3");
  EXPECT_EQ(ToString(-(V("a") + V("b"))), "-(a + b)");
  EXPECT_EQ(ToString(-(-V("a"))), "--a");
  EXPECT_EQ(ToString(V("a") * C(-2)), "a * -2");
  EXPECT_EQ(ToString(P("ceil_div(a+1,  2)")), "ceil_div(a + 1, 2)");
}

RC_GTEST_PROP(ExprPrint, RoundTripsThroughTheParser, ()) {
  Expr e = *GenExpr(5, true);
  base::Result<Expr> r = ParseExpr(ToString(e));
  RC_ASSERT(r.ok());
  RC_ASSERT(*r == e);
}

// Text over the grammar's alphabet: never a crash; whatever parses prints and re-parses.
RC_GTEST_PROP(ExprParse, ArbitraryTextIsSafe, ()) {
  const std::string alphabet = "ab1 0+-*/%(),minaxceil_d.9";
  std::string text = *rc::gen::container<std::string>(rc::gen::elementOf(alphabet));
  Parsed r = Parse(text);
  RC_ASSERT(r.expr.has_value() == r.error.empty());
  if (!r.expr) {
    RC_ASSERT(r.column <= text.size());
    return;
  }
  RC_ASSERT(Parse(ToString(*r.expr)).expr == r.expr);
}

// An evaluation as the tests read it: the value, or the error's message.
struct Evaluated {
  std::optional<int64_t> value;
  std::string error;
};
Evaluated Eval(std::string_view text, const Assignment& at = {}) {
  base::Result<int64_t> r = Evaluate(P(text), at);
  if (r.ok()) return {.value = *r};
  return {.error = r.status().message()};
}

TEST(ExprEval, ExactValues) {
  EXPECT_EQ(Eval("batch * ctx * 2", {{"batch", 256}, {"ctx", 131072}}).value, int64_t{67108864});
  EXPECT_EQ(Eval("ceil_div(7, 2) + min(3, 4) + max(3, 4)").value, 11);
  EXPECT_EQ(Eval("-7 / 2").value, -4);  // floor
  EXPECT_EQ(Eval("-7 % 2").value, 1);   // remainder takes the divisor's sign
  EXPECT_EQ(Eval("7 % -2").value, -1);
  EXPECT_EQ(Eval("ceil_div(-7, 2)").value, -3);
  EXPECT_EQ(Eval("ceil_div(7, -2)").value, -3);
  EXPECT_EQ(Eval("-9223372036854775808 % -1").value, 0);
}

TEST(ExprEval, ErrorsAreReportedNotUndefined) {
  EXPECT_FALSE(Eval("a * b", {{"a", int64_t{1} << 40}, {"b", int64_t{1} << 40}}).value);
  EXPECT_NE(
      Eval("a * b", {{"a", int64_t{1} << 40}, {"b", int64_t{1} << 40}}).error.find("overflow"),
      std::string::npos);
  EXPECT_FALSE(Eval("9223372036854775807 + 1").value);
  EXPECT_FALSE(Eval("-9223372036854775808 - 1").value);
  EXPECT_FALSE(Eval("--9223372036854775808").value);
  EXPECT_FALSE(Eval("-9223372036854775808 / -1").value);
  EXPECT_NE(Eval("x / (x - 5)", {{"x", 5}}).error.find("division by zero"), std::string::npos);
  EXPECT_FALSE(Eval("x % 0", {{"x", 5}}).value);
  EXPECT_FALSE(Eval("ceil_div(x, 0)", {{"x", 5}}).value);
  EXPECT_NE(Eval("x + y", {{"x", 5}}).error.find("unbound variable y"), std::string::npos);
}

TEST(ExprAst, VariablesSubstituteAndFormat) {
  Expr e = P("batch * ctx + min(ctx, 4)");
  EXPECT_EQ(Variables(e), (std::set<std::string>{"batch", "ctx"}));
  EXPECT_FALSE(IsVariableFree(e));
  Expr s = Substitute(e, {{"ctx", C(8)}});
  EXPECT_EQ(ToString(s), "batch * 8 + min(8, 4)");
  EXPECT_TRUE(IsVariableFree(Substitute(s, {{"batch", C(2)}})));
  EXPECT_EQ(FormatAssignment({{"ctx", 1}, {"batch", 256}}), "batch=256, ctx=1");
  EXPECT_EQ(FormatAssignment({}), "");
}

}  // namespace
}  // namespace loadplan::expr
