// Registry rules: P9 a declaration of a registry kernel's name matches the registry
// contract exactly; P10 every call of a registry kernel satisfies its preconditions.
// Kernels the registry does not have (other runtimes') are not checked here.
#include <fmt/format.h>

#include "kernels/registry/registry.h"
#include "verifier/codes.h"
#include "verifier/registry_contract.h"
#include "verifier/rules/proof_report.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

// No P7 problem and nothing malformed: a declaration P9 can compare (else P7 or the
// parser reports it, once).
bool WellDeclared(const Kernel& k) {
  if (k.malformed) return false;
  for (const Param& p : k.params) {
    if (p.malformed) return false;
    if (p.access == Access::kScalar) continue;
    if (!p.dtype || !p.extent) return false;
    for (const std::string& v : Variables(*p.extent)) {
      const Param* q = FindParam(k, v);
      if (q == nullptr || q->access != Access::kScalar) return false;
    }
  }
  return true;
}

// P9 for `k`; true when it matches the registry (its calls are then checked for P10).
bool CheckDeclaration(const Kernel& k, const kernels::KernelSpec& spec, DiagSink& sink) {
  const std::vector<ContractMismatch> diffs = CompareWithRegistry(k, spec);
  for (const ContractMismatch& d : diffs) {
    sink.Error(
        std::string(codes::kRegistryContract), d.ptr, d.message,
        fmt::format(
            "declare `{}` exactly as the registry does (`loadplan kernels {}` prints it), or "
            "give your kernel another name",
            spec.name, spec.name));
  }
  return diffs.empty();
}

void ReportBroken(const Call& c, const kernels::Precondition& p, const std::string& at,
                  DiagSink& sink) {
  const Arg* subject = FindArg(c, p.subject);
  sink.Error(std::string(codes::kPrecondition), subject != nullptr ? subject->ptr : c.ptr,
             fmt::format("call of registry kernel `{}` breaks its precondition `{}` at {}",
                         c.kernel, p.text, at),
             fmt::format("pass scalars for which `{}` holds: {}", p.text, p.why));
}

// `lhs cmp rhs` over the box: kFalse (with a witness) when some point breaks it.
Proof ProveCompare(const RuleContext& ctx, const Expr& l, kernels::Compare cmp, const Expr& r) {
  const Expr one = Expr::Const(1);
  switch (cmp) {
    case kernels::Compare::kLe: return ctx.LessEq(l, r);
    case kernels::Compare::kLt: return ctx.LessEq(l + one, r);
    case kernels::Compare::kGe: return ctx.LessEq(r, l);
    case kernels::Compare::kGt: return ctx.LessEq(r + one, l);
    case kernels::Compare::kEq: {
      Proof p = ctx.LessEq(l, r);
      return p.truth == Truth::kFalse ? p : ctx.LessEq(r, l);
    }
  }
  return {};
}

// P10 for one call. Needs every scalar passed (else P5) over good variables (else S6/S8);
// derive calls need variable-free scalars (else P4). Variable-free: evaluated exactly.
// Otherwise each precondition is proved over the box: a counterexample is P10 with its
// witness; a proof that runs out of budget is left to the launch-time check (validate_call.h).
void CheckPreconditions(const RuleContext& ctx, const Program& g, const Call& c,
                        const kernels::KernelSpec& spec, DiagSink& sink) {
  std::map<std::string, Expr> bind;
  Assignment at;
  bool fixed = true;
  for (const kernels::ParamSpec& p : spec.params) {
    if (p.access != Access::kScalar) continue;
    const Arg* a = FindArg(c, p.name);
    std::optional<Expr> e = a != nullptr ? ScalarOf(*a) : std::nullopt;
    if (!e || !ctx.ExprOk(*e) || (g.derive && !IsVariableFree(*e))) return;
    if (IsVariableFree(*e)) {
      const std::optional<int64_t> v = ValueAt(*e, {});
      if (!v) return;  // S9
      at[p.name] = *v;
    } else {
      fixed = false;
    }
    bind[p.name] = std::move(*e);
  }
  for (const kernels::Precondition& p : spec.preconditions) {
    if (fixed) {
      if (kernels::Holds(p, at) == std::optional<bool>(true)) continue;
      std::string values;
      for (const std::string& v : Variables(Expr::Binary(ExprOp::kSub, p.lhs, p.rhs))) {
        values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", v, at[v]);
      }
      ReportBroken(c, p, values, sink);
      continue;
    }
    const Proof proof = ProveCompare(ctx, Substitute(p.lhs, bind), p.cmp, Substitute(p.rhs, bind));
    if (proof.truth != Truth::kFalse) continue;
    ReportBroken(c, p, rules::WitnessText(proof.witness), sink);
  }
}

}  // namespace

void CheckRegistry(const RuleContext& ctx, DiagSink& sink) {
  std::map<std::string, const kernels::KernelSpec*, std::less<>>
      matching;  // declared exactly as the registry
  for (const Kernel& k : ctx.m.kernels) {
    const kernels::KernelSpec* spec = kernels::FindKernel(k.name);
    if (spec == nullptr || !WellDeclared(k)) continue;
    if (CheckDeclaration(k, *spec, sink)) matching.emplace(k.name, spec);
  }
  if (matching.empty()) return;
  for (const Program& g : ctx.m.programs) {
    if (g.malformed) continue;
    for (const Call& c : g.calls) {
      if (c.malformed || c.type != CallType::kKernel) continue;
      if (auto it = matching.find(c.kernel); it != matching.end())
        CheckPreconditions(ctx, g, c, *it->second, sink);
    }
  }
}

}  // namespace loadplan::verifier
