// Mutators for the structure rules S6 (unresolved references), S8 (variable ranges) and
// S9 (sizes that overflow or divide by zero somewhere in the box).
#include <limits>

#include <fmt/format.h>

#include "fuzz/mutate_rules.h"
#include "verifier/usage.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT

namespace {

// A variable-like name no declaration uses, sharing a prefix with the variables.
std::string FreshVariable(const Manifest& m, const Pick& pick) {
  std::string stem = m.vars.empty() ? "batch" : Choose(m.vars, pick).name + "x";
  return Fresh(m, stem);
}

}  // namespace

std::optional<Mutation> UnknownBuffer(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const std::vector<std::pair<CallRef, std::string>> reads = ReadBufferArgs(m);
  if (reads.empty()) return std::nullopt;
  const auto [c, param] = Choose(reads, pick);
  Arg& a = *MutableArg(m.programs[c.program].calls[c.call], param);
  a.buffer = Fresh(m, *a.buffer + std::vector<std::string>{".missing", "x", "/", "~"}[pick(4)]);
  return Finish("unknown-buffer", m, {{"S6", ArgPtr(m, c, param)}});
}

std::optional<Mutation> UnknownKernel(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<CallRef> calls = KernelCalls(m, true);
  for (CallRef c : KernelCalls(m, false)) calls.push_back(c);
  if (calls.empty()) return std::nullopt;
  const CallRef c = Choose(calls, pick);
  Call& call = m.programs[c.program].calls[c.call];
  call.kernel = Fresh(m, call.kernel + "x");
  return Finish("unknown-kernel", m, {{"S6", ChildPointer(CallPtr(m, c), "kernel")}});
}

std::optional<Mutation> UnknownShapeVariable(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<size_t> shaped;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (!m.buffers[i].shape.empty()) shaped.push_back(i);
  }
  if (shaped.empty()) return std::nullopt;
  Buffer& b = m.buffers[Choose(shaped, pick)];
  const size_t d = pick(b.shape.size());
  b.shape[d] = Expr::Var(FreshVariable(m, pick));
  return Finish("unknown-shape-variable", m,
                {{"S6", Ptr({"buffers", b.name, "shape", std::to_string(d)})}});
}

std::optional<Mutation> UnknownBatchVariable(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto serving = Programs(m, false);
  if (serving.empty()) return std::nullopt;
  Program& p = m.programs[Choose(serving, pick)];
  p.batch = FreshVariable(m, pick);
  return Finish("unknown-batch-variable", m, {{"S6", Ptr({"programs", p.name, "batch"})}});
}

std::optional<Mutation> UnknownCollectiveBuffer(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto serving = Programs(m, false);
  if (serving.empty()) return std::nullopt;
  const size_t p = Choose(serving, pick);
  const std::string name = Fresh(m, m.buffers.empty() ? "kv" : Choose(m.buffers, pick).name + "x");
  m.programs[p].calls.push_back(
      Call{.type = CallType::kCollective, .collective = "all_gather", .buffer = name});
  return Finish("unknown-collective-buffer", m,
                {{"S6", ChildPointer(CallPtr(m, {p, m.programs[p].calls.size() - 1}), "buffer")}});
}

std::optional<Mutation> MinAboveMax(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<size_t> vars;
  for (size_t i = 0; i < m.vars.size(); ++i) {
    if (m.vars[i].max < std::numeric_limits<int64_t>::max()) vars.push_back(i);
  }
  if (vars.empty()) return std::nullopt;
  Variable& v = m.vars[Choose(vars, pick)];
  v.min = v.max + 1;
  return Finish("min-above-max", m, {{"S8", Ptr({"vars", v.name})}});
}

std::optional<Mutation> NegativeMin(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (m.vars.empty()) return std::nullopt;
  Variable& v = m.vars[pick(m.vars.size())];
  v.min = pick(2) == 0 ? -1 : std::numeric_limits<int64_t>::min();
  return Finish("negative-min", m, {{"S8", Ptr({"vars", v.name, "min"})}});
}

// Two more dims of 2^32: the byte size overflows wherever the element count is >= 1.
std::optional<Mutation> OverflowingShape(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  Assignment corner;
  for (const Variable& v : m.vars) corner[v.name] = v.max;
  std::vector<size_t> sized;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (ValueAt(ElementCount(m.buffers[i]), corner).value_or(0) >= 1) sized.push_back(i);
  }
  if (sized.empty()) return std::nullopt;
  Buffer& b = m.buffers[Choose(sized, pick)];
  const size_t at = pick(b.shape.size() + 1);
  b.shape.insert(b.shape.begin() + static_cast<std::ptrdiff_t>(at), 2,
                 Expr::Const(int64_t{1} << 32));
  return Finish("overflowing-shape", m, {{"S9", Ptr({"buffers", b.name, "shape"})}});
}

// A serving buffer gets a dim `4 / (v - min)`: a division by zero at v = min.
std::optional<Mutation> DivisionByZeroShape(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const UsageIndex usage = BuildUsage(m);
  std::vector<size_t> serving;
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const Buffer& b = m.buffers[i];
    bool derive_written = false;
    for (const Use& u : usage.Of(b.name))
      derive_written |= m.programs[u.program].derive && Writes(u.access);
    if (!IsCheckpointBound(b.kind) && !derive_written) serving.push_back(i);
  }
  if (serving.empty() || m.vars.empty()) return std::nullopt;
  Buffer& b = m.buffers[Choose(serving, pick)];
  const Variable& v = Choose(m.vars, pick);
  b.shape.push_back(ParseExpr(fmt::format("4 / ({} - {})", v.name, v.min)).value());
  return Finish("division-by-zero-shape", m, {{"S9", Ptr({"buffers", b.name, "shape"})}});
}

}  // namespace loadplan::fuzz::mut
