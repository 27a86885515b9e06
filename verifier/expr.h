// The verifier's names for expr/'s size expressions: a manifest's shapes, sizes and variable
// box are expressions, so the verifier and every layer above it speak them as verifier::Expr,
// verifier::Box, ... Code below the verifier (the kernel registry) includes expr/expr.h.
#pragma once

#include "expr/expr.h"

namespace loadplan::verifier {

using expr::Assignment;
using expr::Box;
using expr::Evaluate;
using expr::Expr;
using expr::ExprOp;
using expr::Extrema;
using expr::Extremum;
using expr::FindExtrema;
using expr::FormatAssignment;
using expr::IntervalBounds;
using expr::IsVariableFree;
using expr::kMaxExprDepth;
using expr::kMaxExprNesting;
using expr::ParseExpr;
using expr::Proof;
using expr::ProofBudget;
using expr::ProveEvaluates;
using expr::ProveLessEq;
using expr::Range;
using expr::Simplify;
using expr::Substitute;
using expr::Sum;
using expr::ToString;
using expr::Truth;
using expr::ValueAt;
using expr::Variables;

}  // namespace loadplan::verifier
