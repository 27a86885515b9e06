// The boundary rule between pipeline stages: stage k's exported outputs equal stage k+1's
// inputs, pair by pair in name order, in dtype and in shape over the whole variable box.
#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "base/dtype.h"
#include "simulator/deploy/deployment.h"

namespace loadplan::simulator {
namespace {

using verifier::Buffer;
using verifier::BufferKind;
using verifier::Diagnostic;
using verifier::Expr;

// The buffers of one side of a boundary, in name order (bytewise; a parsed model keeps the
// text's order, so sort here).
std::vector<const Buffer*> Side(const verifier::Manifest& m, bool exports) {
  std::vector<const Buffer*> out;
  for (const Buffer& b : m.buffers) {
    if (exports ? b.kind == BufferKind::kOutput && b.exported : b.kind == BufferKind::kInput)
      out.push_back(&b);
  }
  std::sort(out.begin(), out.end(),
            [](const Buffer* a, const Buffer* b) { return a->name < b->name; });
  return out;
}

std::string Names(const std::vector<const Buffer*>& bs) {
  std::string out;
  for (const Buffer* b : bs) out += (out.empty() ? "" : ", ") + b->name;
  return out.empty() ? "none" : out;
}

std::string ShapeText(const Buffer& b) {
  std::string out;
  for (const Expr& e : b.shape) out += (out.empty() ? "" : ", ") + verifier::ToString(e);
  return fmt::format("{} [{}]", base::DtypeName(b.dtype), out);
}

verifier::Note NoteOf(const StageView& s, const Buffer& b, std::string_view role) {
  return {.pointer = b.ptr,
          .message = fmt::format("{}: {} {} {}", s.label, role, b.name, ShapeText(b))};
}

struct Pair {
  const StageView& from;
  const StageView& to;
  const Buffer& out;
  const Buffer& in;
  std::string ptr;  // /stages/<k+1>
};

Diagnostic PairDiag(const Pair& p, std::string_view code, std::string message) {
  return {.code = std::string(code),
          .pointer = p.ptr,
          .message = fmt::format("boundary {} -> {}: {}", p.from.label, p.to.label, message),
          .notes = {NoteOf(p.from, p.out, "exported output"), NoteOf(p.to, p.in, "input")}};
}

// The box of the variables `e` and `f` use: each declared by both stages with one range.
std::optional<verifier::Box> SharedBox(const Pair& p, const Expr& e, const Expr& f,
                                       std::vector<Diagnostic>& out) {
  std::set<std::string> vars = verifier::Variables(e);
  vars.merge(verifier::Variables(f));
  verifier::Box box;
  for (const std::string& v : vars) {
    const verifier::Variable* a = p.from.manifest->FindVar(v);
    const verifier::Variable* b = p.to.manifest->FindVar(v);
    if (a == nullptr || b == nullptr || a->min != b->min || a->max != b->max) {
      const auto range = [](const verifier::Variable* x) {
        return x == nullptr ? std::string("undeclared") : fmt::format("[{}, {}]", x->min, x->max);
      };
      out.push_back(PairDiag(
          p, deploy_codes::kUndecided,
          fmt::format("variable {} must be declared by both stages with one range: {} in {}, {} "
                      "in {}",
                      v, range(a), p.from.label, range(b), p.to.label)));
      return std::nullopt;
    }
    box[v] = {a->min, a->max};
  }
  return box;
}

void CheckDim(const Pair& p, size_t d, const verifier::ProofBudget& budget,
              std::vector<Diagnostic>& out) {
  const Expr& e = p.out.shape[d];
  const Expr& f = p.in.shape[d];
  const std::optional<verifier::Box> box = SharedBox(p, e, f, out);
  if (!box) return;
  const std::string dim =
      fmt::format("dim {}: {} vs {}", d, verifier::ToString(e), verifier::ToString(f));
  for (const auto& [lhs, rhs] : {std::pair{&e, &f}, std::pair{&f, &e}}) {
    const verifier::Proof proof = verifier::ProveLessEq(*lhs, *rhs, *box, budget);
    if (proof.truth == verifier::Truth::kFalse) {
      const verifier::Assignment& w = proof.witness;
      const auto value = [](const std::optional<int64_t>& v) {
        return v ? std::to_string(*v) : std::string("an error");
      };
      const std::optional<int64_t>& ev = lhs == &e ? proof.lhs_at : proof.rhs_at;
      const std::optional<int64_t>& fv = lhs == &e ? proof.rhs_at : proof.lhs_at;
      out.push_back(
          PairDiag(p, deploy_codes::kShape,
                   fmt::format("shapes differ in {} ({} vs {}{}{})", dim, value(ev), value(fv),
                               w.empty() ? "" : " at ", verifier::FormatAssignment(w))));
      return;
    }
    if (proof.truth == verifier::Truth::kUnknown) {
      out.push_back(
          PairDiag(p, deploy_codes::kUndecided,
                   fmt::format("cannot prove the shapes equal in {} over the variable "
                               "box{}",
                               dim, proof.error.ok() ? "" : ": " + proof.error.message())));
      return;
    }
  }
}

void CheckPair(const Pair& p, const verifier::ProofBudget& budget, std::vector<Diagnostic>& out) {
  if (p.out.dtype != p.in.dtype) {
    out.push_back(PairDiag(p, deploy_codes::kDtype,
                           fmt::format("dtypes differ: {} exports {} as {}, {} takes {} as {}",
                                       p.from.label, p.out.name, base::DtypeName(p.out.dtype),
                                       p.to.label, p.in.name, base::DtypeName(p.in.dtype))));
  }
  if (p.out.shape.size() != p.in.shape.size()) {
    out.push_back(PairDiag(p, deploy_codes::kShape,
                           fmt::format("ranks differ: {} has {} dims, {} has {}", p.out.name,
                                       p.out.shape.size(), p.in.name, p.in.shape.size())));
    return;
  }
  for (size_t d = 0; d < p.out.shape.size(); ++d) CheckDim(p, d, budget, out);
}

}  // namespace

std::vector<Diagnostic> CheckBoundaries(const std::vector<StageView>& stages,
                                        const verifier::ProofBudget& budget) {
  std::vector<Diagnostic> out;
  for (size_t k = 0; k + 1 < stages.size(); ++k) {
    const StageView& from = stages[k];
    const StageView& to = stages[k + 1];
    const std::vector<const Buffer*> exports = Side(*from.manifest, true);
    const std::vector<const Buffer*> inputs = Side(*to.manifest, false);
    const std::string ptr = verifier::ChildPointer("/stages", k + 1);
    if (exports.size() != inputs.size()) {
      Diagnostic d{.code = std::string(deploy_codes::kCount),
                   .pointer = ptr,
                   .message = fmt::format(
                       "boundary {} -> {}: {} exports {} output{} ({}), {} takes {} input{} ({})",
                       from.label, to.label, from.label, exports.size(),
                       exports.size() == 1 ? "" : "s", Names(exports), to.label, inputs.size(),
                       inputs.size() == 1 ? "" : "s", Names(inputs)),
                   .hint =
                       "mark each activation the next stage reads \"export\": true, and "
                       "declare one input per exported output"};
      for (const Buffer* b : exports) d.notes.push_back(NoteOf(from, *b, "exported output"));
      for (const Buffer* b : inputs) d.notes.push_back(NoteOf(to, *b, "input"));
      out.push_back(std::move(d));
      continue;
    }
    for (size_t i = 0; i < exports.size(); ++i) {
      CheckPair({.from = from, .to = to, .out = *exports[i], .in = *inputs[i], .ptr = ptr}, budget,
                out);
    }
  }
  return out;
}

}  // namespace loadplan::simulator
