// The shared rule facts (variable box, usage index, derive order, size proofs) and the rule table.
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

// A prefix-free encoding of an expression's structure: equal keys, equal trees.
void AppendKey(const Expr& e, std::string& out) {
  out.push_back(static_cast<char>(e.op));
  out.push_back(static_cast<char>(e.args.size()));
  if (e.op == ExprOp::kConst) {
    out.append(reinterpret_cast<const char*>(&e.value), sizeof e.value);
  } else if (e.op == ExprOp::kVar || !e.name.empty()) {
    uint64_t n = e.name.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += e.name;
  }
  for (const Expr& a : e.args) AppendKey(a, out);
}

}  // namespace

namespace {
const Proof kProved{.truth = Truth::kTrue};
}  // namespace

const Proof& RuleContext::Evaluates(const Expr& e) const {
  // A constant evaluates (ProveEvaluates' own fast path, given a box to search).
  if (e.IsConst() && options.budget.max_boxes >= 1) return kProved;
  std::string key(1, 'E');
  AppendKey(e, key);
  auto it = proof_cache.find(key);
  if (it == proof_cache.end())
    it = proof_cache.emplace(std::move(key), ProveEvaluates(e, box, options.budget)).first;
  return it->second;
}

const Proof& RuleContext::LessEq(const Expr& lhs, const Expr& rhs) const {
  if (lhs.IsConst() && rhs.IsConst() && lhs.value <= rhs.value && options.budget.max_boxes >= 1)
    return kProved;
  std::string key(1, 'L');
  AppendKey(lhs, key);
  AppendKey(rhs, key);
  auto it = proof_cache.find(key);
  if (it == proof_cache.end()) {
    it = proof_cache.emplace(std::move(key), ProveLessEq(lhs, rhs, box, options.budget)).first;
  }
  return it->second;
}

bool RuleContext::VarOk(std::string_view name) const { return box.contains(std::string(name)); }

bool RuleContext::ExprOk(const Expr& e) const {
  if (e.op == ExprOp::kVar && !box.contains(e.name)) return false;
  for (const Expr& a : e.args) {
    if (!ExprOk(a)) return false;
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

namespace {

// i when `x` is v[i].
template <typename T>
std::optional<size_t> PositionIn(const std::vector<T>& v, const T& x) {
  std::less<const T*> before;
  if (v.empty() || before(&x, v.data()) || !before(&x, v.data() + v.size())) return std::nullopt;
  return static_cast<size_t>(&x - v.data());
}

// b's index in m.buffers, when the per-index tables cover it.
std::optional<size_t> IndexOf(const RuleContext& ctx, const Buffer& b, size_t table_size) {
  const std::vector<Buffer>& all = ctx.m.buffers;
  if (table_size != all.size()) return std::nullopt;
  return PositionIn(all, b);
}

// Fills the per-index tables by walking m.buffers and the name-ordered maps together.
void IndexBuffers(RuleContext& ctx) {
  const std::vector<Buffer>& all = ctx.m.buffers;
  if (!SortedByName(all)) return;
  static const std::vector<Use> kNone;
  ctx.uses_by_index.assign(all.size(), &kNone);
  auto first = all.begin();  // the first buffer of each used name, as lower_bound finds it
  for (const auto& [name, uses] : ctx.usage.by_buffer) {
    while (first != all.end() && first->name < name) ++first;
    ctx.used_buffers.push_back(first != all.end() && first->name == name ? &*first : nullptr);
  }
  auto use = ctx.usage.by_buffer.begin();
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& name = all[i].name;
    while (use != ctx.usage.by_buffer.end() && use->first < name) ++use;
    if (use != ctx.usage.by_buffer.end() && use->first == name) ctx.uses_by_index[i] = &use->second;
  }
}

// size_proofs holds, per name, the proof of its last ShapeOk buffer (as assigning
// in buffer order would). With sorted buffers, proofs that hold live only in
// size_ok_by_index (per buffer, the verdict of its name): rules report the others.
void ComputeSizes(RuleContext& ctx) {
  const std::vector<Buffer>& all = ctx.m.buffers;
  if (!SortedByName(all)) {
    for (const Buffer& b : all) {
      if (ctx.ShapeOk(b)) ctx.size_proofs.insert_or_assign(b.name, ctx.Evaluates(ByteSize(b)));
    }
    return;
  }
  ctx.size_ok_by_index.assign(all.size(), 0);
  for (size_t i = 0, j = 0; i < all.size(); i = j) {
    const Proof* last = nullptr;  // of the run [i, j) of buffers named all[i].name
    for (j = i; j < all.size() && all[j].name == all[i].name; ++j) {
      if (ctx.ShapeOk(all[j])) last = &ctx.Evaluates(ByteSize(all[j]));
    }
    if (last == nullptr) continue;
    std::fill(ctx.size_ok_by_index.begin() + static_cast<ptrdiff_t>(i),
              ctx.size_ok_by_index.begin() + static_cast<ptrdiff_t>(j),
              last->truth == Truth::kTrue);
    if (last->truth != Truth::kTrue)
      ctx.size_proofs.emplace_hint(ctx.size_proofs.end(), all[i].name, *last);
  }
}

// The name lookups every rule needs, resolved once.
void ResolveNames(RuleContext& ctx) {
  const Manifest& m = ctx.m;
  if (SortedByName(m.buffers))
    ctx.buffer_index = IndexByName(m.buffers);  // first of a name, as lower_bound
  for (const Program& p : m.programs) {
    ctx.call_base.push_back(ctx.arg_base.size());
    for (const Call& c : p.calls) {
      ctx.arg_base.push_back(ctx.arg_buffers.size());
      for (const Arg& a : c.args)
        ctx.arg_buffers.push_back(a.buffer ? ctx.FindBuffer(*a.buffer) : nullptr);
    }
  }
}

}  // namespace

const Buffer* RuleContext::ArgBuffer(const Program& p, const Call& c, const Arg& a) const {
  std::optional<size_t> pi = PositionIn(m.programs, p), ci = PositionIn(p.calls, c),
                        ai = PositionIn(c.args, a);
  if (!pi || !ci || !ai || *pi >= call_base.size() || !a.buffer)
    return a.buffer ? FindBuffer(*a.buffer) : nullptr;
  return arg_buffers[arg_base[call_base[*pi] + *ci] + *ai];
}

const Buffer* RuleContext::FindBuffer(std::string_view name) const {
  if (buffer_index.empty()) return m.FindBuffer(name);
  std::optional<size_t> i = buffer_index.Find(name);
  return i ? &m.buffers[*i] : nullptr;
}

const std::vector<Use>& RuleContext::UsesOf(const Buffer& b) const {
  if (std::optional<size_t> i = IndexOf(*this, b, uses_by_index.size())) return *uses_by_index[*i];
  return usage.Of(b.name);
}

bool RuleContext::SizeOk(const Buffer& b) const {
  if (std::optional<size_t> i = IndexOf(*this, b, size_ok_by_index.size()))
    return size_ok_by_index[*i] != 0;
  if (!size_ok_by_index.empty()) {  // a copy, not an element: its name's verdict
    const Buffer* e = FindBuffer(b.name);
    return e != nullptr && size_ok_by_index[static_cast<size_t>(e - m.buffers.data())] != 0;
  }
  auto it = size_proofs.find(b.name);
  return it != size_proofs.end() && it->second.truth == Truth::kTrue;
}

const Buffer* RuleContext::GoodBuffer(std::string_view name) const {
  const Buffer* b = FindBuffer(name);
  return b != nullptr && SizeOk(*b) ? b : nullptr;
}

const Buffer* RuleContext::GoodUsedBuffer(size_t i, std::string_view name) const {
  if (i >= used_buffers.size()) return GoodBuffer(name);
  const Buffer* b = used_buffers[i];
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
  RuleContext ctx{.m = m, .options = options};
  ResolveNames(ctx);
  ctx.usage = BuildUsage(m, [&ctx](size_t p, size_t c, size_t a) {
    return ctx.arg_buffers[ctx.arg_base[ctx.call_base[p] + c] + a];
  });
  ctx.derive = OrderDerivePrograms(m, ctx.usage);
  for (const Variable& v : m.vars) {
    if (!v.malformed && v.min >= 0 && v.min <= v.max) ctx.box[v.name] = Range{v.min, v.max};
  }
  if (ctx.derive.cycle.empty()) {
    for (size_t i = 0; i < ctx.derive.order.size(); ++i) ctx.derive_rank[ctx.derive.order[i]] = i;
  }
  ComputeSizes(ctx);
  IndexBuffers(ctx);
  return ctx;
}

std::span<const RuleFamily> AllRuleFamilies() {
  static constexpr std::array<RuleFamily, 9> kFamilies{{
      {"structure", &CheckStructure},
      {"kinds", &CheckKinds},
      {"slices", &CheckSlices},
      {"programs", &CheckPrograms},
      {"calls", &CheckCalls},
      {"registry", &CheckRegistry},
      {"dataflow", &CheckDataflow},
      {"bounds", &CheckBounds},
      {"lints", &CheckLints},
  }};
  return kFamilies;
}

}  // namespace loadplan::verifier
