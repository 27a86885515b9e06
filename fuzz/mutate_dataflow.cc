// Mutators for the dataflow rules D1-D5 and the bounds rule B1.
#include <algorithm>

#include <fmt/format.h>

#include "fuzz/mutate_rules.h"
#include "verifier/usage.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT

namespace {

const std::string& ArgBuffer(const Manifest& m, CallRef c, std::string_view param) {
  return *FindArg(m.programs[c.program].calls[c.call], param)->buffer;
}

}  // namespace

// P copies X -> c; a new program Q copies c -> y and P then copies y -> z: P -> Q -> P.
// Without such a P: two new programs copying into each other's carries.
std::optional<Mutation> Cycle(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (!EnsureStandardKernel(m, "copy")) return std::nullopt;
  std::vector<CallRef> copies;
  for (CallRef c : KernelCalls(m, true, true)) {
    if (m.programs[c.program].calls[c.call].kernel == "copy") copies.push_back(c);
  }
  const std::string q = Fresh(m, "derive.cyc");
  const std::string y = Fresh(m, "cyc.y");
  std::string p;
  if (copies.empty()) {
    p = Fresh(m, q + ".b");
    const std::string x = Fresh(m, "cyc.x");
    AddBuffer(m, U8Carry(x, 4));
    AddBuffer(m, U8Carry(y, 4));
    AddProgram(m, Program{.name = p, .derive = true, .calls = {CopyCall(y, x, 4)}});
    AddProgram(m, Program{.name = q, .derive = true, .calls = {CopyCall(x, y, 4)}});
  } else {
    const CallRef c = Choose(copies, pick);
    const std::string carry = ArgBuffer(m, c, "dst");
    const int64_t n = *ScalarArg(m.programs[c.program].calls[c.call], "n");
    const std::string z = Fresh(m, "cyc.z");
    AddBuffer(m, U8Carry(y, n));
    AddBuffer(m, U8Carry(z, n, true));
    m.programs[c.program].calls.push_back(CopyCall(y, z, n));
    p = m.programs[c.program].name;
    AddProgram(m, Program{.name = q, .derive = true, .calls = {CopyCall(carry, y, n)}});
  }
  return Finish("cycle", m, {{"D1", Ptr({"programs", std::min(p, q)})}});
}

// A derive call reads a carry nothing writes.
std::optional<Mutation> OrphanRead(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (!EnsureStandardKernel(m, "copy")) return std::nullopt;
  auto derive = Programs(m, true);
  const int64_t n = static_cast<int64_t>(pick(6));
  const std::string o = Fresh(m, "orphan"), z = Fresh(m, "orphan.out");
  AddBuffer(m, U8Carry(o, n));
  AddBuffer(m, U8Carry(z, n, true));
  if (derive.empty()) {
    AddProgram(m, Program{.name = Fresh(m, "derive.o"), .derive = true});
    derive.push_back(m.programs.size() - 1);
  }
  const size_t p = Choose(derive, pick);
  m.programs[p].calls.push_back(CopyCall(o, z, n));
  return Finish("orphan-read", m, {{"D2", ArgPtr(m, {p, m.programs[p].calls.size() - 1}, "src")}});
}

// A derive program's first call reads a carry its last call writes.
std::optional<Mutation> WriterLater(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (!EnsureStandardKernel(m, "copy")) return std::nullopt;
  auto derive = Programs(m, true);
  const int64_t n = static_cast<int64_t>(pick(6));
  const std::string src = U8Input(m, n, pick);
  const std::string o = Fresh(m, "late"), z = Fresh(m, "late.out");
  AddBuffer(m, U8Carry(o, n));
  AddBuffer(m, U8Carry(z, n, true));
  if (derive.empty()) {
    AddProgram(m, Program{.name = Fresh(m, "derive.l"), .derive = true});
    derive.push_back(m.programs.size() - 1);
  }
  const size_t p = Choose(derive, pick);
  std::vector<Call>& calls = m.programs[p].calls;
  calls.insert(calls.begin(), CopyCall(o, z, n));
  calls.push_back(CopyCall(src, o, n));
  return Finish("writer-later", m, {{"D2", ArgPtr(m, {p, 0}, "src")}});
}

// A derive call repeated at the end of its program: its carry has two derive writers.
std::optional<Mutation> TwoWriters(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto calls = KernelCalls(m, true, true);
  if (calls.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  std::vector<Call>& prog = m.programs[c.program].calls;
  prog.push_back(prog[c.call]);
  return Finish("two-writers", m, {{"D3", ArgPtr(m, {c.program, prog.size() - 1}, "dst")}});
}

// A derive writer one element short (D4); its derive readers that read the whole carry
// now read past what was written (D5).
std::optional<Mutation> ShortWrite(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<CallRef> writers;
  for (CallRef c : KernelCalls(m, true, true)) {
    if (ScalarArg(m.programs[c.program].calls[c.call], "n").value_or(0) > 0) writers.push_back(c);
  }
  if (writers.empty()) return std::nullopt;
  const CallRef c = Choose(writers, pick);
  const std::string carry = ArgBuffer(m, c, "dst");
  Arg& n = *MutableArg(m.programs[c.program].calls[c.call], "n");
  const int64_t written = n.scalar->value - 1;
  n.scalar = Expr::Const(written);
  std::vector<Expected> expected = {{"D4", ArgPtr(m, c, "dst")}};
  const UsageIndex usage = BuildUsage(m);
  for (const Use& u : usage.Of(carry)) {
    if (!m.programs[u.program].derive || !Reads(u.access) || !u.extent) continue;
    if (ValueAt(*u.extent, {}).value_or(0) > written) expected.push_back({"D5", u.ptr});
  }
  return Finish("short-write", m, expected);
}

// n one past the destination's size: B1 at dst, and at src when that is as small
// (plus D5 there when src is a carry whose producer wrote only its size).
std::optional<Mutation> DeriveExtentTooLong(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto calls = KernelCalls(m, true, true);
  if (calls.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Call& call = m.programs[c.program].calls[c.call];
  const Buffer* src = m.FindBuffer(ArgBuffer(m, c, "src"));
  const Buffer* dst = m.FindBuffer(ArgBuffer(m, c, "dst"));
  if (src == nullptr || dst == nullptr || !Count(*src) || !Count(*dst)) return std::nullopt;
  const int64_t n = *Count(*dst) + 1;
  MutableArg(call, "n")->scalar = Expr::Const(n);
  std::vector<Expected> expected = {{"B1", ArgPtr(m, c, "dst")}};
  if (*Count(*src) < n) {
    expected.push_back({"B1", ArgPtr(m, c, "src")});
    const UsageIndex usage = BuildUsage(in);
    for (const Use& u : usage.Of(src->name)) {
      if (m.programs[u.program].derive && Writes(u.access) && src->kind == BufferKind::kCarry) {
        expected.push_back({"D5", ArgPtr(m, c, "src")});
        break;
      }
    }
  }
  return Finish("derive-extent-too-long", m, expected);
}

// A serving call's extent scalar becomes count + v / max(v): one element too long at
// the corner v = max only (or (max - v) / (max - min): at v = min only).
std::optional<Mutation> ServingExtentTooLongAtCorner(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<std::pair<CallRef, const Param*>>
      sites;  // buffer params whose extent is one scalar of its own
  for (CallRef c : KernelCalls(m, false)) {
    const Kernel* k = m.FindKernel(m.programs[c.program].calls[c.call].kernel);
    if (k == nullptr) continue;
    for (const Param& p : k->params) {
      if (!p.extent || p.extent->op != ExprOp::kVar || !FindParam(*k, p.extent->name)) continue;
      int uses = 0;
      for (const Param& q : k->params)
        uses += q.extent && Variables(*q.extent).contains(p.extent->name);
      const Arg* a = FindArg(m.programs[c.program].calls[c.call], p.name);
      if (uses == 1 && a && a->buffer && m.FindBuffer(*a->buffer)) sites.push_back({c, &p});
    }
  }
  std::vector<const Variable*> vars;
  for (const Variable& v : m.vars) {
    if (v.max > 0) vars.push_back(&v);
  }
  if (sites.empty() || vars.empty()) return std::nullopt;
  const auto [c, p] = Choose(sites, pick);
  const Variable& v = *Choose(vars, pick);
  Call& call = m.programs[c.program].calls[c.call];
  const Buffer& b = *m.FindBuffer(*FindArg(call, p->name)->buffer);
  const bool at_min = v.min < v.max && pick(2) == 0;
  const std::string bump = at_min ? fmt::format("({} - {}) / {}", v.max, v.name, v.max - v.min)
                                  : fmt::format("{} / {}", v.name, v.max);
  const std::string text = fmt::format("{} + {}", ToString(ElementCount(b)), bump);
  MutableArg(call, p->extent->name)->scalar = ParseExpr(text).value();
  return Finish("serving-extent-too-long-at-corner", m, {{"B1", ArgPtr(m, c, p->name)}});
}

}  // namespace loadplan::fuzz::mut
