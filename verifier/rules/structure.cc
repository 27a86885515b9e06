// Structure rules over the parsed model: S6 unresolved references, S8 variable
// ranges, S9 sizes that overflow or divide by zero somewhere in the variable box.
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/common.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

using rules::NamesOf;
using rules::SuggestHint;

// S6 for each undeclared variable of `e` (names that are buffers are P5's, for scalars).
void CheckExprVars(const RuleContext& ctx, const Expr& e, const std::string& ptr, DiagSink& sink,
                   bool skip_buffer_names = false) {
  for (const std::string& v : Variables(e)) {
    if (ctx.m.FindVar(v) != nullptr) continue;
    if (skip_buffer_names && ctx.m.FindBuffer(v) != nullptr) continue;
    sink.Error(std::string(codes::kUnresolved), ptr, fmt::format("unknown variable `{}`", v),
               SuggestHint(v, NamesOf(ctx.m.vars), "declare it under /vars"));
  }
}

void CheckDims(const RuleContext& ctx, const std::vector<Expr>& dims, const std::string& ptr,
               DiagSink& sink) {
  for (size_t i = 0; i < dims.size(); ++i) CheckExprVars(ctx, dims[i], ChildPointer(ptr, i), sink);
}

void CheckArgRefs(const RuleContext& ctx, const Kernel& k, const Arg& a, DiagSink& sink) {
  const Param* p = FindParam(k, a.param);
  if (a.malformed || p == nullptr || p->malformed) return;  // unknown param: P5
  if (p->access != Access::kScalar) {
    if (a.buffer && ctx.m.FindBuffer(*a.buffer) == nullptr && !rules::LooksScalar(ctx.m, *a.buffer)) {
      sink.Error(std::string(codes::kUnresolved), a.ptr, fmt::format("unknown buffer `{}`", *a.buffer),
                 SuggestHint(*a.buffer, NamesOf(ctx.m.buffers), "declare it under /buffers"));
    }
    return;
  }
  if (std::optional<Expr> e = ScalarOf(a)) CheckExprVars(ctx, *e, a.ptr, sink, true);
}

void CheckCallRefs(const RuleContext& ctx, const Call& c, DiagSink& sink) {
  if (c.type == CallType::kCollective) {
    if (ctx.m.FindBuffer(c.buffer) == nullptr) {
      sink.Error(std::string(codes::kUnresolved), ChildPointer(c.ptr, "buffer"),
                 fmt::format("unknown buffer `{}`", c.buffer),
                 SuggestHint(c.buffer, NamesOf(ctx.m.buffers), "declare it under /buffers"));
    }
    return;
  }
  CheckDims(ctx, c.grid, ChildPointer(c.ptr, "grid"), sink);
  CheckDims(ctx, c.block, ChildPointer(c.ptr, "block"), sink);
  const Kernel* k = ctx.m.FindKernel(c.kernel);
  if (k == nullptr) {
    sink.Error(std::string(codes::kUnresolved), ChildPointer(c.ptr, "kernel"),
               fmt::format("unknown kernel `{}`", c.kernel),
               SuggestHint(c.kernel, NamesOf(ctx.m.kernels), "declare it under /kernels"));
    return;
  }
  if (k->malformed) return;
  for (const Arg& a : c.args) CheckArgRefs(ctx, *k, a, sink);
}

void CheckReferences(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (!b.malformed) CheckDims(ctx, b.shape, ChildPointer(b.ptr, "shape"), sink);
  }
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    if (p.batch && ctx.m.FindVar(*p.batch) == nullptr) {
      sink.Error(std::string(codes::kUnresolved), ChildPointer(p.ptr, "batch"),
                 fmt::format("unknown variable `{}`", *p.batch),
                 SuggestHint(*p.batch, NamesOf(ctx.m.vars), "declare it under /vars"));
    }
    for (const Call& c : p.calls) {
      if (!c.malformed) CheckCallRefs(ctx, c, sink);
    }
  }
}

void CheckVarRanges(const RuleContext& ctx, DiagSink& sink) {
  for (const Variable& v : ctx.m.vars) {
    if (v.malformed) continue;
    if (v.min < 0) {
      sink.Error(std::string(codes::kVarRange), ChildPointer(v.ptr, "min"),
                 fmt::format("variable `{}` has negative min {}", v.name, v.min),
                 "variables are sizes: use a min of 0 or more");
    } else if (v.min > v.max) {
      sink.Error(std::string(codes::kVarRange), v.ptr,
                 fmt::format("variable `{}` has min {} > max {}", v.name, v.min, v.max),
                 "swap min and max, or fix the bound");
    }
  }
}

void CheckEvaluates(const RuleContext& ctx, const Expr& e, const std::string& ptr, DiagSink& sink) {
  if (!ctx.ExprOk(e)) return;
  rules::ReportEvaluates(ProveEvaluates(e, ctx.box, ctx.options.budget), ptr,
                         fmt::format("`{}`", ToString(e)), sink);
}

void CheckSizes(const RuleContext& ctx, DiagSink& sink) {
  for (const auto& [name, proof] : ctx.size_proofs) {
    const Buffer& b = *ctx.m.FindBuffer(name);
    rules::ReportEvaluates(proof, ChildPointer(b.ptr, "shape"),
                           fmt::format("the size of buffer `{}`", name), sink);
  }
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    for (const Call& c : p.calls) {
      if (c.malformed || c.type != CallType::kKernel) continue;
      for (size_t i = 0; i < c.grid.size(); ++i)
        CheckEvaluates(ctx, c.grid[i], ChildPointer(ChildPointer(c.ptr, "grid"), i), sink);
      for (size_t i = 0; i < c.block.size(); ++i)
        CheckEvaluates(ctx, c.block[i], ChildPointer(ChildPointer(c.ptr, "block"), i), sink);
      for (const Arg& a : c.args) {
        if (!a.malformed && a.scalar) CheckEvaluates(ctx, *a.scalar, a.ptr, sink);
      }
    }
  }
}

}  // namespace

void CheckStructure(const RuleContext& ctx, DiagSink& sink) {
  CheckVarRanges(ctx, sink);
  CheckReferences(ctx, sink);
  CheckSizes(ctx, sink);
}

}  // namespace loadplan::verifier
