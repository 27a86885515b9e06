// Parsing and evaluating registry preconditions.
#include "kernels/registry/precondition.h"

#include <array>
#include <utility>

namespace loadplan::kernels {
namespace {

struct CompareToken {
  std::string_view text;
  Compare cmp;
};
// Two-character tokens first, so "<=" is not read as "<".
constexpr std::array<CompareToken, 5> kTokens = {{
    {"==", Compare::kEq},
    {"<=", Compare::kLe},
    {">=", Compare::kGe},
    {"<", Compare::kLt},
    {">", Compare::kGt},
}};

// The first variable of `e` in reading order ("" when it names none).
std::string FirstName(const expr::Expr& e) {
  if (e.op == expr::ExprOp::kVar) return e.name;
  for (const expr::Expr& a : e.args) {
    if (std::string n = FirstName(a); !n.empty()) return n;
  }
  return {};
}

}  // namespace

std::optional<Precondition> ParsePrecondition(std::string_view text, std::string_view why) {
  for (const CompareToken& t : kTokens) {
    const size_t at = text.find(t.text);
    if (at == std::string_view::npos) continue;
    const std::string_view rest = text.substr(at + t.text.size());
    if (rest.find_first_of("<>=") != std::string_view::npos) return std::nullopt;
    base::Result<expr::Expr> lhs = expr::ParseExpr(text.substr(0, at));
    base::Result<expr::Expr> rhs = expr::ParseExpr(rest);
    if (!lhs.ok() || !rhs.ok()) return std::nullopt;
    std::string subject = FirstName(*lhs);
    if (subject.empty()) subject = FirstName(*rhs);
    return Precondition{.text = std::string(text),
                        .lhs = std::move(lhs).value(),
                        .rhs = std::move(rhs).value(),
                        .cmp = t.cmp,
                        .subject = std::move(subject),
                        .why = std::string(why)};
  }
  return std::nullopt;
}

std::optional<bool> Holds(const Precondition& p, const expr::Assignment& scalars) {
  const std::optional<int64_t> l = expr::ValueAt(p.lhs, scalars), r = expr::ValueAt(p.rhs, scalars);
  if (!l || !r) return std::nullopt;
  switch (p.cmp) {
    case Compare::kEq: return *l == *r;
    case Compare::kLe: return *l <= *r;
    case Compare::kLt: return *l < *r;
    case Compare::kGe: return *l >= *r;
    case Compare::kGt: return *l > *r;
  }
  return std::nullopt;
}

std::vector<const Precondition*> Violated(const KernelSpec& k, const expr::Assignment& scalars) {
  std::vector<const Precondition*> out;
  for (const Precondition& p : k.preconditions) {
    if (Holds(p, scalars) != std::optional<bool>(true)) out.push_back(&p);
  }
  return out;
}

std::string_view CompareText(Compare c) {
  for (const CompareToken& t : kTokens) {
    if (t.cmp == c) return t.text;
  }
  return "?";
}

}  // namespace loadplan::kernels
