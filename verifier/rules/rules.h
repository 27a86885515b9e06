// The rule table: every rule family with one signature, and the facts they share.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "verifier/dataflow.h"
#include "verifier/diag.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"
#include "verifier/usage.h"
#include "verifier/verify.h"

namespace loadplan::verifier {

// Facts computed once and shared by the rules. Rules skip, quietly, anything that
// depends on a broken fact (a malformed entity, an undeclared or ill-ranged
// variable, a size that does not evaluate): its cause is reported once, elsewhere.
struct RuleContext {
  const Manifest& m;
  const VerifyOptions& options;
  UsageIndex usage;
  DeriveOrder derive;
  Box box;  // the well-formed variables (declared, not malformed, 0 <= min <= max)
  std::map<std::string, size_t, std::less<>> derive_rank;  // program -> index in derive.order
  std::map<std::string, Proof, std::less<>> size_proofs;   // ShapeOk buffer -> ByteSize evaluates

  [[nodiscard]] bool VarOk(std::string_view name) const;
  [[nodiscard]] bool ExprOk(const Expr& e) const;  // every variable VarOk
  [[nodiscard]] bool ShapeOk(const Buffer& b) const;  // not malformed, every dim ExprOk
  [[nodiscard]] bool SizeOk(const Buffer& b) const;   // ShapeOk and its size evaluates over the box
  [[nodiscard]] const Buffer* GoodBuffer(std::string_view name) const;  // SizeOk buffer or nullptr
  [[nodiscard]] const Program& ProgramOf(const Use& u) const { return m.programs[u.program]; }
  [[nodiscard]] const Call& CallOf(const Use& u) const;
  [[nodiscard]] bool IsDerive(const Use& u) const { return ProgramOf(u).derive; }
  // (rank of the program in derive order, call index); nullopt outside the order.
  [[nodiscard]] std::optional<std::pair<size_t, size_t>> PlanPos(const Use& u) const;
  // "program `decode` (call 3)"
  [[nodiscard]] std::string Describe(const Use& u) const;
  // "batch in [1, 256]"
  [[nodiscard]] std::string VarRangeText(std::string_view name) const;
};

RuleContext MakeRuleContext(const Manifest& m, const VerifyOptions& options);

using RuleFn = void (*)(const RuleContext&, DiagSink&);

struct RuleFamily {
  std::string_view name;  // "structure", "kinds", ...
  RuleFn check;
};

void CheckStructure(const RuleContext& ctx, DiagSink& sink);  // S6, S8, S9
void CheckKinds(const RuleContext& ctx, DiagSink& sink);      // K1-K7
void CheckPrograms(const RuleContext& ctx, DiagSink& sink);   // P1-P8 (P5-P7 via CheckCalls)
void CheckCalls(const RuleContext& ctx, DiagSink& sink);      // P5-P7: arguments and kernel contracts
void CheckDataflow(const RuleContext& ctx, DiagSink& sink);   // D1-D5
void CheckBounds(const RuleContext& ctx, DiagSink& sink);     // B1, B2
void CheckLints(const RuleContext& ctx, DiagSink& sink);      // L1-L3

// Every family, in phase order: structure -> references -> semantics -> lints.
std::span<const RuleFamily> AllRuleFamilies();

}  // namespace loadplan::verifier
