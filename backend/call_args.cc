// Binding planned derive calls to memory, and checking them against the kernel registry.
#include "backend/call_args.h"

#include <map>

#include <fmt/format.h>

#include "kernels/contract.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::backend {
namespace {

using simulator::PlannedArg;
using simulator::PlannedCall;

const PlannedArg* FindArg(const PlannedCall& call, std::string_view param) {
  for (const PlannedArg& a : call.args) {
    if (a.param == param) return &a;
  }
  return nullptr;
}

bool HasScalar(const PlannedCall& call, std::string_view param) {
  for (const simulator::PlannedScalar& s : call.scalars) {
    if (s.param == param) return true;
  }
  return false;
}

// The bytes the contract's extent gives with the call's scalars; nullopt when it does not evaluate.
std::optional<uint64_t> ContractBytes(const kernels::ParamContract& pc, const verifier::Assignment& scalars) {
  const auto dtype = verifier::ParseDtype(pc.dtype);
  const auto extent = verifier::ParseExpr(pc.extent).expr;
  if (!dtype || !extent) return std::nullopt;
  const verifier::Param p{.name = pc.name, .access = verifier::Access::kRead, .dtype = dtype, .extent = extent};
  return verifier::ExtentBytes(p, scalars);
}

// "" when `call` binds exactly `c`'s parameters as `c` declares them.
std::string CallMismatch(const simulator::LoadPlan& plan, const PlannedCall& call, const kernels::KernelContract& c) {
  verifier::Assignment scalars;
  for (const simulator::PlannedScalar& s : call.scalars) scalars[s.param] = s.value;
  size_t buffers = 0;
  for (const kernels::ParamContract& pc : c.params) {
    if (pc.access == "scalar") {
      if (!HasScalar(call, pc.name)) return fmt::format("scalar {} is not bound", pc.name);
      continue;
    }
    ++buffers;
    const PlannedArg* a = FindArg(call, pc.name);
    if (a == nullptr) return fmt::format("buffer param {} is not bound", pc.name);
    const simulator::PlannedBuffer& b = plan.buffer(a->buffer);
    const std::string dtype(verifier::DtypeName(b.dtype));
    const std::optional<uint64_t> want = ContractBytes(pc, scalars);
    if (std::string(verifier::AccessName(a->access)) != pc.access || dtype != pc.dtype || want != a->bytes) {
      return fmt::format("param {} is {} {} ({} bytes), the backend implements {} {} ({} bytes)", pc.name,
                         verifier::AccessName(a->access), dtype, a->bytes, pc.access, pc.dtype,
                         want ? fmt::format("{}", *want) : std::string("?"));
    }
  }
  if (call.args.size() != buffers || call.scalars.size() != c.params.size() - buffers) {
    return fmt::format("binds {} buffers and {} scalars, the backend's contract has {} params", call.args.size(),
                       call.scalars.size(), c.params.size());
  }
  return {};
}

}  // namespace

base::Result<kernels::KernelArgs> BindCall(const simulator::LoadPlan& plan, const PlannedCall& call,
                                           const std::function<uint8_t*(simulator::BufferId)>& address) {
  if (call.kernel.empty()) return base::Status::Error(fmt::format("{}: not a kernel call", call.ptr));
  kernels::KernelArgs args;
  for (const simulator::PlannedScalar& s : call.scalars) args.scalars[s.param] = s.value;
  for (const PlannedArg& a : call.args) {
    if (simulator::Index(a.buffer) >= plan.buffers.size()) {
      return base::Status::Error(fmt::format("{}: param {} binds buffer {}, which is not in the plan", call.ptr,
                                             a.param, simulator::Index(a.buffer)));
    }
    const simulator::PlannedBuffer& b = plan.buffer(a.buffer);
    uint8_t* data = address(a.buffer);
    if (data == nullptr && b.bytes > 0) {
      return base::Status::Error(fmt::format("{}: param {} binds buffer {}, which is not held now", call.ptr,
                                             a.param, b.name));
    }
    args.buffers[a.param] = {.data = data, .bytes = b.bytes};
  }
  return args;
}

std::vector<std::string> CheckContracts(const simulator::LoadPlan& plan) {
  std::vector<std::string> errors;
  std::map<std::string, bool, std::less<>> reported;  // one message per kernel
  for (const PlannedCall& call : plan.calls) {
    if (reported[call.kernel]) continue;
    const kernels::KernelContract* c = kernels::FindContract(call.kernel);
    if (c == nullptr) {
      errors.push_back(fmt::format("kernel {} (called at {}) is not implemented by this backend", call.kernel, call.ptr));
      reported[call.kernel] = true;
      continue;
    }
    if (std::string e = CallMismatch(plan, call, *c); !e.empty()) {
      errors.push_back(fmt::format("kernel {} at {}: {}", call.kernel, call.ptr, e));
      reported[call.kernel] = true;
    }
  }
  return errors;
}

}  // namespace loadplan::backend
