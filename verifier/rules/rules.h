// The rule table: every rule family with one signature, and the facts they share.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "verifier/derive_order.h"
#include "verifier/diag.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"
#include "verifier/name_index.h"
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
  // ShapeOk buffer -> ByteSize evaluates. With m.buffers sorted by name, only the
  // proofs that do not hold (SizeOk answers from size_ok_by_index).
  std::map<std::string, Proof, std::less<>> size_proofs;
  // Memoised proofs over `box` with options.budget, keyed by the expressions'
  // structure: large manifests repeat the same extents and sizes call after call.
  mutable std::unordered_map<std::string, Proof> proof_cache;
  // By index into m.buffers (when m.buffers is sorted by name, else empty): the
  // buffer's uses and SizeOk, so rules over every buffer avoid lookups by name.
  std::vector<const std::vector<Use>*> uses_by_index;
  std::vector<char> size_ok_by_index;
  NameIndex buffer_index;  // over m.buffers, when sorted by name (else empty)
  // FindBuffer of every kernel argument naming a buffer, resolved once, flattened in
  // program, call, argument order: call_base per program, arg_base per call.
  std::vector<size_t> call_base, arg_base;
  std::vector<const Buffer*> arg_buffers;
  std::vector<const Buffer*> used_buffers;  // FindBuffer of each usage.by_buffer key, in map order

  // ProveEvaluates(e, box, budget) / ProveLessEq(lhs, rhs, box, budget), memoised.
  [[nodiscard]] const Proof& Evaluates(const Expr& e) const;
  [[nodiscard]] const Proof& LessEq(const Expr& lhs, const Expr& rhs) const;
  // m.FindBuffer(name), by hash when the index is built.
  [[nodiscard]] const Buffer* FindBuffer(std::string_view name) const;
  // FindBuffer(*a.buffer) for an argument `a` of call `c` of program `p`, all of m.
  [[nodiscard]] const Buffer* ArgBuffer(const Program& p, const Call& c, const Arg& a) const;
  // usage.Of(b.name), for a buffer of m.
  [[nodiscard]] const std::vector<Use>& UsesOf(const Buffer& b) const;
  [[nodiscard]] bool VarOk(std::string_view name) const;
  [[nodiscard]] bool ExprOk(const Expr& e) const;     // every variable VarOk
  [[nodiscard]] bool ShapeOk(const Buffer& b) const;  // not malformed, every dim ExprOk
  [[nodiscard]] bool SizeOk(const Buffer& b) const;   // ShapeOk and its size evaluates over the box
  [[nodiscard]] const Buffer* GoodBuffer(std::string_view name) const;  // SizeOk buffer or nullptr
  // GoodBuffer(name) for `name`, the i-th key of usage.by_buffer.
  [[nodiscard]] const Buffer* GoodUsedBuffer(size_t i, std::string_view name) const;
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
void CheckKinds(const RuleContext& ctx, DiagSink& sink);      // K1-K11
void CheckSlices(const RuleContext& ctx, DiagSink& sink);     // K12-K15
void CheckPrograms(const RuleContext& ctx, DiagSink& sink);   // P1-P4, P8
void CheckCalls(const RuleContext& ctx, DiagSink& sink);  // P5-P7: arguments and kernel contracts
void CheckRegistry(const RuleContext& ctx,
                   DiagSink& sink);  // P9, P10: registry kernels' contracts and preconditions
void CheckDataflow(const RuleContext& ctx, DiagSink& sink);  // D1-D5
void CheckBounds(const RuleContext& ctx, DiagSink& sink);    // B1, B2
void CheckLints(const RuleContext& ctx, DiagSink& sink);     // L1-L3

// Every family, in phase order: structure -> references -> semantics -> lints.
std::span<const RuleFamily> AllRuleFamilies();

}  // namespace loadplan::verifier
