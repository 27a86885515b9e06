// The shared rule facts (variable box, usage index, derive order, size proofs) and the rule table.
#include <array>

#include <fmt/format.h>

#include "verifier/rules/rules.h"

namespace loadplan::verifier {

bool RuleContext::VarOk(std::string_view name) const { return box.contains(std::string(name)); }

bool RuleContext::ExprOk(const Expr& e) const {
  for (const std::string& v : Variables(e)) {
    if (!VarOk(v)) return false;
  }
  return true;
}

bool RuleContext::ShapeOk(const Buffer& b) const {
  if (b.malformed) return false;
  for (const Expr& d : b.shape) {
    if (!ExprOk(d)) return false;
  }
  return true;
}

bool RuleContext::SizeOk(const Buffer& b) const {
  auto it = size_proofs.find(b.name);
  return it != size_proofs.end() && it->second.truth == Truth::kTrue;
}

const Buffer* RuleContext::GoodBuffer(std::string_view name) const {
  const Buffer* b = m.FindBuffer(name);
  return b != nullptr && SizeOk(*b) ? b : nullptr;
}

const Call& RuleContext::CallOf(const Use& u) const { return m.programs[u.program].calls[u.call]; }

std::optional<std::pair<size_t, size_t>> RuleContext::PlanPos(const Use& u) const {
  auto it = derive_rank.find(ProgramOf(u).name);
  if (it == derive_rank.end()) return std::nullopt;
  return std::pair{it->second, u.call};
}

std::string RuleContext::Describe(const Use& u) const {
  const Program& p = ProgramOf(u);
  std::string_view kind = p.derive ? "derive" : (p.once ? "once" : "serving");
  return fmt::format("{} program `{}` (call {})", kind, p.name, u.call);
}

std::string RuleContext::VarRangeText(std::string_view name) const {
  auto it = box.find(std::string(name));
  if (it == box.end()) return std::string(name);
  return fmt::format("{} in [{}, {}]", name, it->second.min, it->second.max);
}

RuleContext MakeRuleContext(const Manifest& m, const VerifyOptions& options) {
  RuleContext ctx{.m = m, .options = options, .usage = BuildUsage(m),
                  .derive = OrderDerivePrograms(m), .box = {}, .derive_rank = {},
                  .size_proofs = {}};
  for (const Variable& v : m.vars) {
    if (!v.malformed && v.min >= 0 && v.min <= v.max) ctx.box[v.name] = Range{v.min, v.max};
  }
  if (ctx.derive.cycle.empty()) {
    for (size_t i = 0; i < ctx.derive.order.size(); ++i) ctx.derive_rank[ctx.derive.order[i]] = i;
  }
  for (const Buffer& b : m.buffers) {
    if (ctx.ShapeOk(b)) ctx.size_proofs[b.name] = ProveEvaluates(ByteSize(b), ctx.box, options.budget);
  }
  return ctx;
}

std::span<const RuleFamily> AllRuleFamilies() {
  static constexpr std::array<RuleFamily, 6> kFamilies{{
      {"structure", &CheckStructure},
      {"kinds", &CheckKinds},
      {"programs", &CheckPrograms},
      {"dataflow", &CheckDataflow},
      {"bounds", &CheckBounds},
      {"lints", &CheckLints},
  }};
  return kFamilies;
}

}  // namespace loadplan::verifier
