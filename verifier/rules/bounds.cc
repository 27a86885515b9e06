// Bounds rules: every call's extent fits the buffer it binds, for every value in
// the variable box (B1, with a witness), and an unknown proof is an error (B2).
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/proof_report.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

void CheckUse(const RuleContext& ctx, const Buffer& b, const Expr& count, const Use& u,
              DiagSink& sink) {
  if (u.param.empty() || !u.extent || !ctx.ExprOk(*u.extent)) return;
  auto what = [&] {
    return fmt::format("the extent `{}` of parameter `{}`", ToString(*u.extent), u.param);
  };
  const Proof& evaluates = ctx.Evaluates(*u.extent);
  if (evaluates.truth != Truth::kTrue) {
    rules::ReportEvaluates(evaluates, u.ptr, what(), sink);
    return;
  }
  const Proof& p = ctx.LessEq(*u.extent, count);
  if (p.truth == Truth::kTrue) return;
  std::vector<Note> notes{{b.ptr, "buffer declared here"}};
  if (p.truth == Truth::kUnknown) {
    sink.Error(std::string(codes::kUnproved), u.ptr,
               fmt::format("could not prove that {} fits buffer `{}` for every admissible value",
                           what(), b.name),
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
  size_t i = 0;
  for (const auto& [name, uses] : ctx.usage.by_buffer) {
    const Buffer* b = ctx.GoodUsedBuffer(i++, name);
    if (b == nullptr) continue;
    const Expr count = ElementCount(*b);
    for (const Use& u : uses) CheckUse(ctx, *b, count, u, sink);
  }
}

}  // namespace loadplan::verifier
