// Bounds rules: every call's extent fits the buffer it binds, for every value in
// the variable box (B1, with a witness), and an unknown proof is an error (B2).
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/common.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

void CheckUse(const RuleContext& ctx, const Buffer& b, const Use& u, DiagSink& sink) {
  if (u.param.empty() || !u.extent || !ctx.ExprOk(*u.extent)) return;
  std::string what = fmt::format("the extent `{}` of parameter `{}`", ToString(*u.extent), u.param);
  Proof evaluates = ProveEvaluates(*u.extent, ctx.box, ctx.options.budget);
  if (!rules::ReportEvaluates(evaluates, u.ptr, what, sink)) return;
  Proof p = ProveLessEq(*u.extent, ElementCount(b), ctx.box, ctx.options.budget);
  if (p.truth == Truth::kTrue) return;
  std::vector<Note> notes{{b.ptr, "buffer declared here"}};
  if (p.truth == Truth::kUnknown) {
    sink.Error(std::string(codes::kUnproved), u.ptr,
               fmt::format("could not prove that {} fits buffer `{}` for every admissible value",
                           what, b.name),
               "narrow the variables' ranges, or make the extent and the shape the same expression",
               std::move(notes));
    return;
  }
  sink.Error(std::string(codes::kExtent), u.ptr,
             fmt::format("extent {} of param {} exceeds buffer {}'s {} elements at {} ({})",
                         p.lhs_at.value_or(0), u.param, b.name, p.rhs_at.value_or(0),
                         rules::WitnessText(p.witness), ctx.Describe(u)),
             "bind a larger buffer or pass smaller scalars", std::move(notes));
}

}  // namespace

void CheckBounds(const RuleContext& ctx, DiagSink& sink) {
  for (const auto& [name, uses] : ctx.usage.by_buffer) {
    const Buffer* b = ctx.GoodBuffer(name);
    if (b == nullptr) continue;
    for (const Use& u : uses) CheckUse(ctx, *b, u, sink);
  }
}

}  // namespace loadplan::verifier
