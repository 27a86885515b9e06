// Binding planned derive calls to memory, and checking kernel contracts against the registry.
#include "backend/call_args.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kernels/registry/registry.h"
#include "verifier/registry_contract.h"

namespace loadplan::backend {
namespace {

using verifier::Access;

std::map<std::string, uint32_t, std::less<>> BufferIndex(const simulator::LoadPlan& plan) {
  std::map<std::string, uint32_t, std::less<>> index;
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) index.emplace(plan.buffers[i].name, i);
  return index;
}

// The param's extent in bytes with the call's scalars substituted (variable-free: rule P4).
std::optional<uint64_t> ExtentBytes(const verifier::Param& p, const std::map<std::string, int64_t, std::less<>>& scalars) {
  if (!p.extent || !p.dtype) return std::nullopt;
  verifier::Assignment at(scalars.begin(), scalars.end());
  const auto v = verifier::Evaluate(*p.extent, at);
  if (!v.value || *v.value < 0) return std::nullopt;
  uint64_t bits = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(*v.value), verifier::DtypeBits(*p.dtype), &bits)) return std::nullopt;
  return (bits + 7) / 8;
}

// The first difference from the registry (verifier::CompareWithRegistry, the comparison
// rule P9 makes at check time), or "" when the declaration matches.
std::string ContractMismatch(const verifier::Kernel& k, const kernels::KernelSpec& c) {
  const std::vector<verifier::ContractMismatch> diffs = verifier::CompareWithRegistry(k, c);
  if (diffs.empty()) return {};
  return fmt::format("{} ({}): the backend implements only the registry's contract", diffs.front().message,
                     diffs.front().ptr);
}

}  // namespace

BoundCall BindCall(const verifier::Manifest& m, const simulator::LoadPlan& plan, const simulator::PlannedCall& call,
                   const std::function<uint8_t*(uint32_t)>& address) {
  BoundCall out;
  const verifier::Program* prog = m.FindProgram(call.program);
  if (!prog || call.index >= prog->calls.size()) return {.error = fmt::format("{}: no such call in the manifest", call.ptr)};
  const verifier::Call& c = prog->calls[call.index];
  const verifier::Kernel* k = m.FindKernel(c.kernel);
  if (c.type != verifier::CallType::kKernel || !k) return {.error = fmt::format("{}: not a kernel call", call.ptr)};
  out.kernel = k->name;
  const auto index = BufferIndex(plan);
  for (const verifier::Arg& a : c.args) {
    if (!a.scalar) continue;
    const auto v = verifier::Evaluate(*a.scalar, {});
    if (!v.value) return {.error = fmt::format("{}: scalar {} does not evaluate: {}", a.ptr, a.param, v.error)};
    out.args.scalars[a.param] = *v.value;
  }
  for (const verifier::Arg& a : c.args) {
    if (!a.buffer) continue;
    const auto it = index.find(*a.buffer);
    const verifier::Param* p = verifier::FindParam(*k, a.param);
    if (it == index.end() || !p) return {.error = fmt::format("{}: buffer {} is not in the plan", a.ptr, *a.buffer)};
    const simulator::PlannedBuffer& b = plan.buffers[it->second];
    out.args.buffers[a.param] = {.data = address(it->second), .bytes = b.bytes};
    const uint64_t extent = ExtentBytes(*p, out.args.scalars).value_or(b.bytes);
    out.uses.push_back({.param = a.param, .buffer = it->second, .access = p->access, .extent_bytes = std::min(extent, b.bytes)});
  }
  return out;
}

std::vector<std::string> CheckContracts(const verifier::Manifest& m, const simulator::LoadPlan& plan) {
  if (!verifier::IsSortedModel(m)) {
    return {"the manifest model is not in name order (a hand-built model?): its lookups would miss; "
            "pass verifier::SortModel(m), the model the plan describes"};
  }
  std::vector<std::string> errors;
  std::map<std::string, bool> seen;
  for (const simulator::PlannedCall& call : plan.calls) {
    const verifier::Program* prog = m.FindProgram(call.program);
    if (!prog || call.index >= prog->calls.size()) continue;
    const std::string& name = prog->calls[call.index].kernel;
    if (seen[name]) continue;
    seen[name] = true;
    const verifier::Kernel* k = m.FindKernel(name);
    const kernels::KernelSpec* c = kernels::FindKernel(name);
    if (!k || !c) {
      errors.push_back(fmt::format("kernel {} (called at {}) is not implemented by this backend", name, call.ptr));
      continue;
    }
    if (std::string e = ContractMismatch(*k, *c); !e.empty()) errors.push_back(e);
  }
  return errors;
}

}  // namespace loadplan::backend
