// Mutators for the program and call rules P1-P8.
#include <fmt/format.h>

#include "fuzz/mutate_rules.h"
#include "verifier/usage.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT

std::optional<Mutation> DeriveFlag(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto derive = Programs(m, true);
  if (derive.empty()) return std::nullopt;
  Program& p = m.programs[Choose(derive, pick)];
  const size_t flag = pick(m.vars.empty() ? 2 : 3);
  if (flag == 0) p.once = true;
  if (flag == 1) p.graph = true;
  if (flag == 2) p.batch = Choose(m.vars, pick).name;
  const char* key = flag == 0 ? "once" : flag == 1 ? "graph" : "batch";
  return Finish("derive-flag", m, {{"P1", Ptr({"programs", p.name, key})}});
}

// A derive call that writes a serving buffer (fresh, of a random serving kind).
std::optional<Mutation> DeriveTouchesServing(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto derive = Programs(m, true);
  if (derive.empty() || !EnsureStandardKernel(m, "copy")) return std::nullopt;
  const size_t p = Choose(derive, pick);
  const int64_t n = static_cast<int64_t>(pick(9));
  const std::string src = U8Input(m, n, pick);
  const BufferKind kind =
      std::vector<BufferKind>{BufferKind::kState, BufferKind::kScratch, BufferKind::kInput,
                              BufferKind::kOutput, BufferKind::kPeer}[pick(5)];
  const std::string dst = Fresh(m, "fuzz.scratch");
  AddBuffer(
      m, Buffer{.name = dst, .kind = kind, .dtype = base::Dtype::kU8, .shape = {Expr::Const(n)}});
  Program& prog = m.programs[p];
  prog.calls.push_back(CopyCall(src, dst, n));
  return Finish("derive-touches-serving", m,
                {{"P2", ArgPtr(m, {p, prog.calls.size() - 1}, "dst")}});
}

std::optional<Mutation> DeriveCollective(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto derive = Programs(m, true);
  if (derive.empty() || m.buffers.empty()) return std::nullopt;
  // Over any buffer, carries with a variable shape included: the collective is P3 alone
  // (the kind rules leave derive collectives out).
  std::vector<std::string> targets;
  for (const Buffer& b : m.buffers) targets.push_back(b.name);
  if (targets.empty()) return std::nullopt;
  const size_t p = Choose(derive, pick);
  m.programs[p].calls.push_back(Call{
      .type = CallType::kCollective, .collective = "all_reduce", .buffer = Choose(targets, pick)});
  return Finish("derive-collective", m, {{"P3", CallPtr(m, {p, m.programs[p].calls.size() - 1})}});
}

// n -> min(n, v): never larger, so bounds still hold; only finding 1 (P4) is new.
std::optional<Mutation> DeriveScalarVariable(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto calls = KernelCalls(m, true, true);
  if (calls.empty() || m.vars.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Arg& n = *MutableArg(m.programs[c.program].calls[c.call], "n");
  n.scalar =
      ParseExpr(fmt::format("min({}, {})", n.scalar->value, Choose(m.vars, pick).name)).value();
  return Finish("derive-scalar-variable", m, {{"P4", ArgPtr(m, c, "n")}});
}

std::optional<Mutation> DeriveGridVariable(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto calls = KernelCalls(m, true);
  if (calls.empty() || m.vars.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Call& call = m.programs[c.program].calls[c.call];
  if (call.grid.empty()) call.grid.push_back(Expr::Const(1));
  const size_t i = pick(call.grid.size());
  call.grid[i] =
      ParseExpr(fmt::format("max({}, {})", ToString(call.grid[i]), Choose(m.vars, pick).name))
          .value();
  return Finish("derive-grid-variable", m,
                {{"P4", Ptr({"programs", m.programs[c.program].name, "calls",
                             std::to_string(c.call), "grid", std::to_string(i)})}});
}

std::optional<Mutation> MissingScalarArg(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<std::pair<CallRef, size_t>> scalars;
  for (bool derive : {true, false}) {
    for (CallRef c : KernelCalls(m, derive)) {
      const Call& call = m.programs[c.program].calls[c.call];
      for (size_t a = 0; a < call.args.size(); ++a) {
        if (call.args[a].scalar) scalars.push_back({c, a});
      }
    }
  }
  if (scalars.empty()) return std::nullopt;
  const auto [c, a] = Choose(scalars, pick);
  Call& call = m.programs[c.program].calls[c.call];
  call.args.erase(call.args.begin() + static_cast<std::ptrdiff_t>(a));
  // At the call's "args", or at the call when no argument is left (no "args" is written).
  const std::string at = call.args.empty() ? CallPtr(m, c) : ChildPointer(CallPtr(m, c), "args");
  return Finish("missing-scalar-arg", m, {{"P5", at}});
}

std::optional<Mutation> ExtraArg(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<CallRef> calls = KernelCalls(m, true);
  for (CallRef c : KernelCalls(m, false)) calls.push_back(c);
  if (calls.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Call& call = m.programs[c.program].calls[c.call];
  const Kernel* k = m.FindKernel(call.kernel);
  if (k == nullptr) return std::nullopt;
  std::string name = std::vector<std::string>{"m", "nn", "src2", "n_b9"}[pick(4)];
  while (FindParam(*k, name) != nullptr || FindArg(call, name) != nullptr) name += "x";
  call.args.push_back(Arg{.param = name, .scalar = Expr::Const(1)});
  return Finish("extra-arg", m, {{"P5", ArgPtr(m, c, name)}});
}

// A read-only buffer parameter passed an integer: only the argument's kind is wrong.
std::optional<Mutation> ScalarForBuffer(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const std::vector<std::pair<CallRef, std::string>> reads = ReadBufferArgs(m);
  if (reads.empty()) return std::nullopt;
  const auto [c, param] = Choose(reads, pick);
  Arg& a = *MutableArg(m.programs[c.program].calls[c.call], param);
  a.buffer.reset();
  a.scalar = Expr::Const(static_cast<int64_t>(pick(4)));
  return Finish("scalar-for-buffer", m, {{"P5", ArgPtr(m, c, param)}});
}

// Another dtype for a buffer that kernel parameters bind: P6 at every such argument.
std::optional<Mutation> DtypeMismatch(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const UsageIndex usage = BuildUsage(m);
  std::vector<std::string> bound;
  for (const auto& [name, uses] : usage.by_buffer) {
    for (const Use& u : uses) {
      if (!u.param.empty()) {
        bound.push_back(name);
        break;
      }
    }
  }
  if (bound.empty()) return std::nullopt;
  const std::string name = Choose(bound, pick);
  Buffer b = *m.FindBuffer(name);
  std::vector<std::string_view> dtypes = base::AllDtypeNames();
  b.dtype = *base::ParseDtype(Choose(dtypes, pick));
  Assignment corner;
  for (const Variable& v : m.vars) corner[v.name] = v.max;
  if (b.dtype == m.FindBuffer(name)->dtype || !ValueAt(ByteSize(b), corner)) return std::nullopt;
  // A checkpoint tensor must keep whole bytes (else K8 as well): no odd F4 count.
  const bool checkpoint = b.kind == BufferKind::kWeight || b.kind == BufferKind::kSource;
  const std::optional<int64_t> count = Count(b);
  if (checkpoint && count && !base::FillsWholeBytes(static_cast<uint64_t>(*count), b.dtype))
    return std::nullopt;
  std::vector<Expected> expected;
  for (const Use& u : usage.Of(name)) {
    if (!u.param.empty()) expected.push_back({"P6", u.ptr});
  }
  const_cast<Buffer&>(*m.FindBuffer(name)).dtype = b.dtype;
  return Finish("dtype-mismatch", m, expected);
}

namespace {

std::optional<Mutation> BreakExtent(const Manifest& in, const Pick& pick, bool drop) {
  Manifest m = in;
  std::vector<std::pair<size_t, size_t>> params;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    for (size_t p = 0; p < m.kernels[k].params.size(); ++p) {
      if (m.kernels[k].params[p].extent) params.push_back({k, p});
    }
  }
  if (params.empty()) return std::nullopt;
  const auto [k, p] = Choose(params, pick);
  Param& param = m.kernels[k].params[p];
  if (drop) param.extent.reset();
  if (!drop) param.extent = Expr::Var(FindParam(m.kernels[k], "zz") ? "zz_" : "zz");
  std::string ptr = Ptr({"kernels", m.kernels[k].name, "params", param.name});
  return Finish(drop ? "extent-missing" : "extent-unknown-name", m,
                {{"P7", drop ? ptr : ptr + "/extent"}});
}

}  // namespace

std::optional<Mutation> ExtentUnknownName(const Manifest& in, const Pick& pick) {
  return BreakExtent(in, pick, false);
}
std::optional<Mutation> ExtentMissing(const Manifest& in, const Pick& pick) {
  return BreakExtent(in, pick, true);
}

std::optional<Mutation> EmptyProgram(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const std::string name =
      Fresh(m, std::vector<std::string>{"idle", "decode", "derive.w"}[pick(3)]);
  AddProgram(m, Program{.name = name, .derive = pick(2) == 0});
  return Finish("empty-program", m, {{"P8", Ptr({"programs", name, "calls"})}});
}

std::optional<Mutation> DeriveGridZero(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto calls = KernelCalls(m, true);
  if (calls.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Call& call = m.programs[c.program].calls[c.call];
  if (call.grid.empty()) call.grid.push_back(Expr::Const(1));
  const size_t i = pick(call.grid.size());
  call.grid[i] = Expr::Const(0);
  return Finish("derive-grid-zero", m,
                {{"P8", Ptr({"programs", m.programs[c.program].name, "calls",
                             std::to_string(c.call), "grid", std::to_string(i)})}});
}

}  // namespace loadplan::fuzz::mut
