// Call and kernel-contract rules: P5 arguments match parameters, P6 dtypes
// match, P7 kernel declarations are complete and extents name scalar params.
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/names.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

std::vector<std::string> ParamNames(const Kernel& k) { return rules::NamesOf(k.params); }

void ReportArgs(std::string ptr, std::string message, std::string hint, DiagSink& sink) {
  sink.Error(std::string(codes::kArgs), std::move(ptr), std::move(message), std::move(hint));
}

// P6: the bound buffer's dtype is the parameter's.
void CheckDtype(const Param& p, const Arg& a, const Buffer* b, DiagSink& sink) {
  if (b == nullptr || b->malformed || !p.dtype || b->dtype == *p.dtype) return;
  sink.Error(std::string(codes::kArgDtype), a.ptr,
             fmt::format("buffer `{}` is {} but parameter `{}` is {}", b->name,
                         base::DtypeName(b->dtype), p.name, base::DtypeName(*p.dtype)),
             "bind a buffer of the parameter's dtype",
             {Note{ChildPointer(p.ptr, "dtype"), "parameter declared here"},
              Note{ChildPointer(b->ptr, "dtype"), "buffer declared here"}});
}

// `bound`: the buffer a.buffer names (RuleContext::ArgBuffer).
void CheckArg(const RuleContext& ctx, const Kernel& k, const Arg& a, const Buffer* bound,
              DiagSink& sink) {
  const Param* p = FindParam(k, a.param);
  if (p == nullptr) {
    ReportArgs(a.ptr, fmt::format("kernel `{}` has no parameter `{}`", k.name, a.param),
               rules::SuggestHint(a.param, ParamNames(k), "remove the argument"), sink);
    return;
  }
  if (p->malformed) return;
  if (p->access != Access::kScalar) {
    const Buffer* b = a.buffer ? bound : nullptr;
    bool unresolved_scalar = a.buffer && b == nullptr && rules::LooksScalar(ctx.m, *a.buffer);
    if (!a.buffer || unresolved_scalar) {
      ReportArgs(a.ptr,
                 fmt::format("parameter `{}` of kernel `{}` takes a buffer, not a scalar", a.param,
                             k.name),
                 "pass a buffer name", sink);
    } else {
      CheckDtype(*p, a, b, sink);
    }
    return;
  }
  if (a.scalar && IsVariableFree(*a.scalar)) return;  // nothing to check
  std::optional<Expr> e = ScalarOf(a);
  if (!e) return;
  for (const std::string& v : Variables(*e)) {
    if (ctx.m.FindVar(v) != nullptr || ctx.FindBuffer(v) == nullptr) continue;
    ReportArgs(a.ptr,
               fmt::format("scalar parameter `{}` of kernel `{}` is passed buffer `{}`", a.param,
                           k.name, v),
               "pass an integer or an expression over variables", sink);
    return;
  }
}

void CheckCallArgs(const RuleContext& ctx, const Program& g, const Call& c, DiagSink& sink) {
  const Kernel* k = ctx.m.FindKernel(c.kernel);
  if (k == nullptr || k->malformed) return;
  for (const Arg& a : c.args) {
    if (!a.malformed) CheckArg(ctx, *k, a, a.buffer ? ctx.ArgBuffer(g, c, a) : nullptr, sink);
  }
  // At the call's "args" when it has an argument (so "args" is there), else at the call:
  // a call without arguments may have no "args" member to point at.
  const std::string where = c.args.empty() ? c.ptr : ChildPointer(c.ptr, "args");
  for (const Param& p : k->params) {
    if (p.malformed || FindArg(c, p.name) != nullptr) continue;
    ReportArgs(
        where,
        fmt::format("call of kernel `{}` has no argument for parameter `{}`", k->name, p.name),
        fmt::format("add \"{}\" to the call's args", p.name), sink);
  }
}

void CheckExtentNames(const Kernel& k, const Param& p, DiagSink& sink) {
  std::vector<std::string> scalars;
  for (const Param& q : k.params) {
    if (q.access == Access::kScalar) scalars.push_back(q.name);
  }
  for (const std::string& v : Variables(*p.extent)) {
    const Param* q = FindParam(k, v);
    if (q != nullptr && q->access == Access::kScalar) continue;
    std::string what = q == nullptr ? "an unknown parameter" : "a buffer parameter";
    sink.Error(
        std::string(codes::kKernelDecl), ChildPointer(p.ptr, "extent"),
        fmt::format("extent of `{}` in kernel `{}` names `{}`, {}; extents may name only the "
                    "kernel's scalar parameters",
                    p.name, k.name, v, what),
        rules::SuggestHint(v, scalars, "declare it as a scalar parameter"));
  }
}

void CheckKernel(const Kernel& k, DiagSink& sink) {
  for (const Param& p : k.params) {
    if (p.malformed || p.access == Access::kScalar) continue;
    if (!p.extent || !p.dtype) {
      sink.Error(std::string(codes::kKernelDecl), p.ptr,
                 fmt::format("buffer parameter `{}` of kernel `{}` declares no {}", p.name, k.name,
                             !p.extent ? "extent" : "dtype"),
                 "declare \"access\", \"dtype\" and \"extent\" for every buffer parameter");
      continue;
    }
    CheckExtentNames(k, p, sink);
  }
}

}  // namespace

void CheckCalls(const RuleContext& ctx, DiagSink& sink) {
  for (const Kernel& k : ctx.m.kernels) {
    if (!k.malformed) CheckKernel(k, sink);
  }
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    for (const Call& c : p.calls) {
      if (!c.malformed && c.type == CallType::kKernel) CheckCallArgs(ctx, p, c, sink);
    }
  }
}

}  // namespace loadplan::verifier
