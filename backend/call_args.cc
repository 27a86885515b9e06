// Binding planned derive calls to memory, and checking them against the kernel registry.
#include "backend/call_args.h"

#include <map>

#include <fmt/format.h>

#include "base/status_lines.h"
#include "kernels/registry/registry.h"
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

// The bytes the registry's extent gives with the call's scalars; nullopt when it does not evaluate.
std::optional<uint64_t> ContractBytes(const kernels::ParamSpec& spec,
                                      const verifier::Assignment& scalars) {
  const verifier::Param p{
      .name = spec.name, .access = spec.access, .dtype = spec.dtype, .extent = spec.extent};
  return verifier::ExtentBytes(p, scalars);
}

std::string BufferMismatch(const simulator::LoadPlan& plan, const PlannedCall& call,
                           const kernels::ParamSpec& spec, const verifier::Assignment& scalars) {
  const PlannedArg* a = FindArg(call, spec.name);
  if (a == nullptr) return fmt::format("buffer param {} is not bound", spec.name);
  const simulator::PlannedBuffer& b = plan.buffer(a->buffer);
  const std::optional<uint64_t> want = ContractBytes(spec, scalars);
  if (a->access == spec.access && spec.dtype == b.dtype && want && want == a->bytes) return {};
  return fmt::format("param {} binds {} {} ({} bytes), the backend implements {} {} ({} bytes)",
                     spec.name, verifier::AccessName(a->access), base::DtypeName(b.dtype),
                     a->bytes ? fmt::format("{}", *a->bytes) : std::string("?"),
                     verifier::AccessName(spec.access),
                     spec.dtype ? base::DtypeName(*spec.dtype) : "-",
                     want ? fmt::format("{}", *want) : std::string("?"));
}

// "" when `call` binds exactly `spec`'s parameters, with its access, dtypes and extents.
std::string CallMismatch(const simulator::LoadPlan& plan, const PlannedCall& call,
                         const kernels::KernelSpec& spec) {
  verifier::Assignment scalars;
  for (const simulator::PlannedScalar& s : call.scalars) scalars[s.param] = s.value;
  size_t buffers = 0;
  for (const kernels::ParamSpec& p : spec.params) {
    if (p.access == verifier::Access::kScalar) {
      if (!HasScalar(call, p.name)) return fmt::format("scalar {} is not bound", p.name);
      continue;
    }
    ++buffers;
    if (std::string e = BufferMismatch(plan, call, p, scalars); !e.empty()) return e;
  }
  if (call.args.size() != buffers || call.scalars.size() != spec.params.size() - buffers) {
    return fmt::format("binds {} buffers and {} scalars, the backend's contract has {} params",
                       call.args.size(), call.scalars.size(), spec.params.size());
  }
  return {};
}

}  // namespace

base::Result<kernels::KernelArgs> BindCall(
    const simulator::LoadPlan& plan, const PlannedCall& call,
    const std::function<uint8_t*(simulator::BufferId)>& address) {
  if (call.kernel.empty())
    return base::Status::Error(fmt::format("{}: not a kernel call", call.ptr));
  kernels::KernelArgs args;
  for (const simulator::PlannedScalar& s : call.scalars) args.scalars[s.param] = s.value;
  for (const PlannedArg& a : call.args) {
    if (simulator::Index(a.buffer) >= plan.buffers.size()) {
      return base::Status::Error(
          fmt::format("{}: param {} binds buffer {}, which is not in the plan", call.ptr, a.param,
                      simulator::Index(a.buffer)));
    }
    const simulator::PlannedBuffer& b = plan.buffer(a.buffer);
    uint8_t* data = address(a.buffer);
    if (data == nullptr && b.bytes > 0) {
      return base::Status::Error(fmt::format("{}: param {} binds buffer {}, which is not held now",
                                             call.ptr, a.param, b.name));
    }
    args.buffers[a.param] = {.data = data, .bytes = b.bytes};
  }
  return args;
}

base::Status CheckContracts(const simulator::LoadPlan& plan) {
  std::vector<std::string> errors;
  std::map<std::string, bool, std::less<>> reported;  // one message per kernel
  for (const PlannedCall& call : plan.calls) {
    if (reported[call.kernel]) continue;
    if (!call.kernel_id) {
      errors.push_back(fmt::format("kernel {} (called at {}) is not implemented by this backend",
                                   call.kernel, call.ptr));
      reported[call.kernel] = true;
      continue;
    }
    const kernels::KernelSpec& spec = kernels::Spec(*call.kernel_id);
    if (std::string e = spec.name != call.kernel ? fmt::format("its kernel id names {}", spec.name)
                                                 : CallMismatch(plan, call, spec);
        !e.empty()) {
      errors.push_back(fmt::format("kernel {} at {}: {}", call.kernel, call.ptr, e));
      reported[call.kernel] = true;
    }
  }
  return base::StatusFromLines(errors);
}

}  // namespace loadplan::backend
