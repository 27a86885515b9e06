// Program rules: derive flags and what derive programs may touch (P1-P4), and
// empty programs (P8). Call/kernel-contract rules P5-P7 are the `calls` family (calls.cc).
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

void CheckFlags(const Program& p, DiagSink& sink) {
  auto flag = [&](bool set, std::string_view key) {
    if (!set) return;
    sink.Error(std::string(codes::kDeriveFlags), ChildPointer(p.ptr, key),
               fmt::format("derive program `{}` is also `{}`; derive programs run once, inside "
                           "weight loading",
                           p.name, key),
               fmt::format("drop \"{}\", or make it a separate serving program", key));
  };
  flag(p.once, "once");
  flag(p.batch.has_value(), "batch");
  flag(p.graph, "graph");
}

bool IsForbiddenInDerive(BufferKind k) {
  return k == BufferKind::kState || k == BufferKind::kScratch || k == BufferKind::kInput ||
         k == BufferKind::kOutput || k == BufferKind::kPeer;
}

// P2: derive kernel calls bind only weights, sources and carries.
void CheckDeriveTouches(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (b.malformed || !IsForbiddenInDerive(b.kind)) continue;
    for (const Use& u : ctx.UsesOf(b)) {
      if (!ctx.IsDerive(u) || u.param.empty()) continue;
      sink.Error(std::string(codes::kDeriveTouches), u.ptr,
                 fmt::format("{} binds {} buffer `{}`; derive programs touch only weights, sources "
                             "and carries",
                             ctx.Describe(u), BufferKindName(b.kind), b.name),
                 "derive into a carry; serving buffers do not exist yet at load",
                 {Note{b.ptr, "declared here"}});
    }
  }
}

// P4 (finding 1): one diagnostic per variable-dependent value of a derive call.
void ReportVariable(const RuleContext& ctx, const Expr& e, const std::string& ptr,
                    std::string_view what, DiagSink& sink) {
  for (const std::string& v : Variables(e)) {
    if (ctx.m.FindVar(v) == nullptr) continue;  // S6 / P5 report it
    sink.Error(std::string(codes::kDeriveVariable), ptr,
               fmt::format("{} of a derive call depends on variable {}; derive runs once at load, "
                           "before variables have values",
                           what, ctx.VarRangeText(v)),
               "use a constant (size it for the variable's max)");
    return;
  }
}

void CheckDeriveCall(const RuleContext& ctx, const Call& c, DiagSink& sink) {
  if (c.type == CallType::kCollective) {
    sink.Error(std::string(codes::kDeriveCollective), c.ptr,
               fmt::format("derive program runs collective `{}`", c.collective),
               "run collectives in a serving or once program");
    return;
  }
  for (size_t i = 0; i < c.grid.size(); ++i) {
    bool zero = c.grid[i].IsConst() && c.grid[i].value == 0;
    if (IsVariableFree(c.grid[i]) && !zero)
      continue;  // nothing to report: skip building the pointer
    std::string ptr = ChildPointer(ChildPointer(c.ptr, "grid"), i);
    ReportVariable(ctx, c.grid[i], ptr, "the grid", sink);
    if (zero) {
      sink.Error(std::string(codes::kEmptyProgram), ptr,
                 "derive call has a grid of 0: it does nothing", "use a grid of at least 1");
    }
  }
  for (size_t i = 0; i < c.block.size(); ++i) {
    if (IsVariableFree(c.block[i])) continue;
    ReportVariable(ctx, c.block[i], ChildPointer(ChildPointer(c.ptr, "block"), i), "the block",
                   sink);
  }
  const Kernel* k = ctx.m.FindKernel(c.kernel);
  if (k == nullptr || k->malformed) return;
  for (const Arg& a : c.args) {
    const Param* p = FindParam(*k, a.param);
    if (a.malformed || p == nullptr || p->access != Access::kScalar) continue;
    if (a.scalar && IsVariableFree(*a.scalar)) continue;  // nothing to report
    if (std::optional<Expr> e = ScalarOf(a))
      ReportVariable(ctx, *e, a.ptr, fmt::format("scalar `{}`", a.param), sink);
  }
}

}  // namespace

void CheckPrograms(const RuleContext& ctx, DiagSink& sink) {
  for (const Program& p : ctx.m.programs) {
    if (p.malformed) continue;
    if (p.calls.empty()) {
      sink.Error(std::string(codes::kEmptyProgram), ChildPointer(p.ptr, "calls"),
                 fmt::format("program `{}` has no calls", p.name),
                 "add calls or remove the program");
    }
    if (!p.derive) continue;
    CheckFlags(p, sink);
    for (const Call& c : p.calls) {
      if (!c.malformed) CheckDeriveCall(ctx, c, sink);
    }
  }
  CheckDeriveTouches(ctx, sink);
}

}  // namespace loadplan::verifier
