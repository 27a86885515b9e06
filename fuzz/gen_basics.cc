// Small draws of the manifest generator: names, variables, counts, shapes and dtypes.
#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "fuzz/gen_draft.h"

namespace loadplan::fuzz::detail {

using base::Dtype;
using verifier::Buffer;
using verifier::Expr;
using verifier::Manifest;
using verifier::Variable;

Buffer& Draft::Add(Buffer b) {
  names.insert(b.name);
  m.buffers.push_back(std::move(b));
  return m.buffers.back();
}

Buffer* Draft::Find(const std::string& name) {
  for (Buffer& b : m.buffers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

int Roll(int n) { return *rc::gen::resize(100, rc::gen::inRange(0, n)); }

std::string FreshName(std::set<std::string>& taken, const std::vector<std::string>& stems) {
  static const std::vector<std::string> kSuffixes = {"",   ".raw", ".0", "0", "/1",
                                                     "~1", ".x",   " b", "_2"};
  std::string name = *rc::gen::elementOf(stems) + *rc::gen::elementOf(kSuffixes);
  while (taken.contains(name))
    name += *rc::gen::elementOf(std::vector<std::string>{".1", "0", "~", "/", "a"});
  taken.insert(name);
  return name;
}

namespace {

// Bounds: equal endpoints, 0, small, large; only variables with a max of at most 2^40
// appear in shapes (see DrawVarShape), the others are still valid `batch` variables.
std::pair<int64_t, int64_t> DrawBounds() {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (Roll(7)) {
    case 0: {
      int64_t v = *rc::gen::element<int64_t>(0, 1, 2, 7, 1 << 20);
      return {v, v};
    }
    case 1: return {0, *rc::gen::inRange<int64_t>(0, 9)};
    case 2: return {1, *rc::gen::inRange<int64_t>(1, 65)};
    case 3: return {*rc::gen::inRange<int64_t>(0, 4), int64_t{1} << *rc::gen::inRange(10, 41)};
    case 4:
      return {0, *rc::gen::element<int64_t>(int64_t{kMax}, int64_t{kMax - 1}, int64_t{1} << 62)};
    case 5: {
      int64_t lo = *rc::gen::inRange<int64_t>(0, 100);
      return {lo, lo + *rc::gen::inRange<int64_t>(0, 3)};
    }
    default: return {*rc::gen::inRange<int64_t>(0, 3), *rc::gen::inRange<int64_t>(3, 300)};
  }
}

}  // namespace

std::vector<Variable> DrawVars() {
  static const std::vector<std::string> kNames = {"b",   "batch",   "batch.x", "batch_2",
                                                  "ctx", "ctx.len", "n",       "n1"};
  std::vector<Variable> vars;
  std::set<std::string> taken;
  const int n = *rc::gen::weightedElement<int>({{2, 0}, {3, 1}, {3, 2}, {2, 3}});
  for (int i = 0; i < n; ++i) {
    std::string name = *rc::gen::elementOf(kNames);
    if (!taken.insert(name).second) continue;
    auto [lo, hi] = DrawBounds();
    vars.push_back(Variable{.name = name, .min = lo, .max = hi});
  }
  return vars;
}

int64_t DrawCount(std::optional<int64_t> max) {
  int64_t c = *rc::gen::weightedElement<int64_t>({{1, 0},
                                                  {4, 1},
                                                  {6, *rc::gen::inRange<int64_t>(2, 17)},
                                                  {3, *rc::gen::inRange<int64_t>(17, 65)},
                                                  {1, *rc::gen::inRange<int64_t>(65, 1025)}});
  if (!max) return c;
  if (*max <= 0) return 0;
  // Copies often keep the whole size: equal counts are the boundary of D4/D5/B1.
  if (Roll(3) == 0) return *max;
  return std::min(c, *max);
}

std::vector<Expr> DrawFixedShape(int64_t count) {
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= count && d <= 64; ++d) {
    if (count % d == 0) divisors.push_back(d);
  }
  switch (Roll(5)) {
    case 0:
      if (count == 1) return {};
      [[fallthrough]];
    case 1: return {Expr::Const(count)};
    case 2: return {Expr::Const(count), Expr::Const(1)};
    default: {
      if (count == 0) return {Expr::Const(*rc::gen::inRange<int64_t>(0, 4)), Expr::Const(0)};
      int64_t d = *rc::gen::elementOf(divisors);
      return {Expr::Const(d), Expr::Const(count / d)};
    }
  }
}

Expr ParseOrDie(const std::string& text) {
  base::Result<verifier::Expr> r = verifier::ParseExpr(text);
  RC_ASSERT(r.ok());
  return std::move(r).value();
}

verifier::Assignment MaxCorner(const Manifest& m) {
  verifier::Assignment at;
  for (const Variable& v : m.vars) at[v.name] = v.max;
  return at;
}

namespace {

std::string DrawVarDim(const std::string& v) {
  static const std::vector<std::string> kForms = {
      "{v}",     "{v}",      "{v} + 1", "2 * {v}", "min({v}, 8)", "max({v}, 3)", "ceil_div({v}, 4)",
      "{v} / 2", "{v} * {v}"};
  return fmt::format(fmt::runtime(*rc::gen::elementOf(kForms)), fmt::arg("v", v));
}

}  // namespace

std::vector<Expr> DrawVarShape(const Manifest& m, Dtype dtype, int64_t max_var) {
  std::vector<std::string> usable;
  for (const Variable& v : m.vars) {
    if (v.max <= max_var) usable.push_back(v.name);
  }
  const int rank = *rc::gen::inRange(0, 4);
  std::vector<Expr> shape;
  for (int i = 0; i < rank; ++i) {
    if (!usable.empty() && Roll(3) != 0) {
      shape.push_back(ParseOrDie(DrawVarDim(*rc::gen::elementOf(usable))));
    } else {
      shape.push_back(Expr::Const(*rc::gen::weightedElement<int64_t>(
          {{1, 0}, {3, 1}, {6, *rc::gen::inRange<int64_t>(2, 65)}})));
    }
  }
  Buffer probe{.dtype = dtype, .shape = shape};
  if (verifier::ValueAt(verifier::ByteSize(probe), MaxCorner(m))) return shape;
  return {Expr::Const(DrawCount())};  // too large at the max corner: a fixed shape instead
}

Dtype DrawDtype() {
  std::vector<std::string_view> names = base::AllDtypeNames();
  return *base::ParseDtype(*rc::gen::elementOf(names));
}

}  // namespace loadplan::fuzz::detail
