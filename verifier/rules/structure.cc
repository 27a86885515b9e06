// Structure rules over the parsed model: S6 unresolved references, S8 variable
// ranges, S9 sizes that overflow or divide by zero somewhere in the variable box.
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/names.h"
#include "verifier/rules/proof_report.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

using rules::NamesOf;
using rules::SuggestHint;

// True when some variable of `e` is undeclared (and, with skip_buffer_names, not a buffer).
bool HasUnknownVar(const RuleContext& ctx, const Expr& e, bool skip_buffer_names) {
  if (e.op == ExprOp::kVar && ctx.m.FindVar(e.name) == nullptr &&
      !(skip_buffer_names && ctx.FindBuffer(e.name) != nullptr)) {
    return true;
  }
  for (const Expr& a : e.args) {
    if (HasUnknownVar(ctx, a, skip_buffer_names)) return true;
  }
  return false;
}

// S6 for each undeclared variable of `e` (names that are buffers are P5's, for scalars).
void CheckExprVars(const RuleContext& ctx, const Expr& e, const std::string& ptr, DiagSink& sink,
                   bool skip_buffer_names = false) {
  for (const std::string& v : Variables(e)) {
    if (ctx.m.FindVar(v) != nullptr) continue;
    if (skip_buffer_names && ctx.FindBuffer(v) != nullptr) continue;
    sink.Error(std::string(codes::kUnresolved), ptr, fmt::format("unknown variable `{}`", v),
               SuggestHint(v, NamesOf(ctx.m.vars), "declare it under /vars"));
  }
}

// Dimension i of the list at `owner`/`key` (pointers built only for a report).
void CheckDims(const RuleContext& ctx, const std::vector<Expr>& dims, const std::string& owner,
               std::string_view key, DiagSink& sink) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!HasUnknownVar(ctx, dims[i], false)) continue;
    CheckExprVars(ctx, dims[i], ChildPointer(ChildPointer(owner, key), i), sink);
  }
}

void CheckArgRefs(const RuleContext& ctx, const Program& g, const Call& c, const Kernel& k,
                  const Arg& a, DiagSink& sink) {
  const Param* p = FindParam(k, a.param);
  if (a.malformed || p == nullptr || p->malformed) return;  // unknown param: P5
  if (p->access != Access::kScalar) {
    if (a.buffer && ctx.ArgBuffer(g, c, a) == nullptr && !rules::LooksScalar(ctx.m, *a.buffer)) {
      sink.Error(std::string(codes::kUnresolved), a.ptr,
                 fmt::format("unknown buffer `{}`", *a.buffer),
                 SuggestHint(*a.buffer, NamesOf(ctx.m.buffers), "declare it under /buffers"));
    }
    return;
  }
  if (a.scalar && !HasUnknownVar(ctx, *a.scalar, true)) return;
  if (std::optional<Expr> e = ScalarOf(a)) CheckExprVars(ctx, *e, a.ptr, sink, true);
}

void CheckCallRefs(const RuleContext& ctx, const Program& g, const Call& c, DiagSink& sink) {
  if (c.type == CallType::kCollective) {
    if (ctx.FindBuffer(c.buffer) == nullptr) {
      sink.Error(std::string(codes::kUnresolved), ChildPointer(c.ptr, "buffer"),
                 fmt::format("unknown buffer `{}`", c.buffer),
                 SuggestHint(c.buffer, NamesOf(ctx.m.buffers), "declare it under /buffers"));
    }
    return;
  }
  CheckDims(ctx, c.grid, c.ptr, "grid", sink);
  CheckDims(ctx, c.block, c.ptr, "block", sink);
  const Kernel* k = ctx.m.FindKernel(c.kernel);
  if (k == nullptr) {
    sink.Error(std::string(codes::kUnresolved), ChildPointer(c.ptr, "kernel"),
               fmt::format("unknown kernel `{}`", c.kernel),
               SuggestHint(c.kernel, NamesOf(ctx.m.kernels), "declare it under /kernels"));
    return;
  }
  if (k->malformed) return;
  for (const Arg& a : c.args) CheckArgRefs(ctx, g, c, *k, a, sink);
}

void CheckReferences(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (!b.malformed) CheckDims(ctx, b.shape, b.ptr, "shape", sink);
  }
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    if (p.batch && ctx.m.FindVar(*p.batch) == nullptr) {
      sink.Error(std::string(codes::kUnresolved), ChildPointer(p.ptr, "batch"),
                 fmt::format("unknown variable `{}`", *p.batch),
                 SuggestHint(*p.batch, NamesOf(ctx.m.vars), "declare it under /vars"));
    }
    for (const Call& c : p.calls) {
      if (!c.malformed) CheckCallRefs(ctx, p, c, sink);
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

// S9 / B2 when `e` may fail to evaluate; `ptr()` builds the pointer only for a report.
template <typename PtrFn>
void CheckEvaluates(const RuleContext& ctx, const Expr& e, PtrFn&& ptr, DiagSink& sink) {
  if (!ctx.ExprOk(e)) return;
  const Proof& proof = ctx.Evaluates(e);
  if (proof.truth == Truth::kTrue) return;
  rules::ReportEvaluates(proof, ptr(), fmt::format("`{}`", ToString(e)), sink);
}

void CheckCallSizes(const RuleContext& ctx, const Call& c, DiagSink& sink) {
  for (size_t i = 0; i < c.grid.size(); ++i) {
    CheckEvaluates(
        ctx, c.grid[i], [&] { return ChildPointer(ChildPointer(c.ptr, "grid"), i); }, sink);
  }
  for (size_t i = 0; i < c.block.size(); ++i) {
    CheckEvaluates(
        ctx, c.block[i], [&] { return ChildPointer(ChildPointer(c.ptr, "block"), i); }, sink);
  }
  for (const Arg& a : c.args) {
    if (!a.malformed && a.scalar)
      CheckEvaluates(
          ctx, *a.scalar, [&] { return a.ptr; }, sink);
  }
}

void CheckSizes(const RuleContext& ctx, DiagSink& sink) {
  for (const auto& [name, proof] : ctx.size_proofs) {
    if (proof.truth == Truth::kTrue) continue;
    const Buffer& b = *ctx.FindBuffer(name);
    rules::ReportEvaluates(proof, ChildPointer(b.ptr, "shape"),
                           fmt::format("the size of buffer `{}`", name), sink);
  }
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    for (const Call& c : p.calls) {
      if (!c.malformed && c.type == CallType::kKernel) CheckCallSizes(ctx, c, sink);
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
