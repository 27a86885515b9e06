// The plan checker on what backends launch: each planned call's kernel, scalars and buffer
// arguments (ids, access, extent bytes) equal the manifest call's, recomputed here, and every
// argument's range [0, bytes) lies inside its buffer.
#include <vector>

#include "kernels/registry/registry.h"
#include "simulator/check/plan_check_internal.h"

namespace loadplan::simulator::checkdetail {
namespace {

// What the planned call should carry, from the manifest call alone.
struct Expected {
  std::vector<PlannedScalar> scalars;
  std::vector<PlannedArg> args;
};

Expected ExpectedCall(const verifier::Manifest& m, const verifier::Call& call) {
  Expected e;
  const verifier::Kernel* k = m.FindKernel(call.kernel);
  if (call.type != verifier::CallType::kKernel || k == nullptr) return e;
  verifier::Assignment values;
  for (const verifier::Arg& a : call.args) {
    if (!a.scalar) continue;
    const int64_t v = verifier::ValueAt(*a.scalar, {}).value_or(0);
    e.scalars.push_back({.param = a.param, .value = v});
    values[a.param] = v;
  }
  for (const verifier::Arg& a : call.args) {
    const verifier::Param* prm = a.buffer ? verifier::FindParam(*k, a.param) : nullptr;
    const verifier::Buffer* b = a.buffer ? m.FindBuffer(*a.buffer) : nullptr;
    if (prm == nullptr || b == nullptr) continue;
    e.args.push_back({.param = a.param,
                      .buffer = BufferId{static_cast<uint32_t>(b - m.buffers.data())},
                      .access = prm->access,
                      .bytes = verifier::ExtentBytes(*prm, values)});
  }
  return e;
}

void CheckOne(Ctx& c, const PlannedCall& pc, const verifier::Call& call) {
  const Expected want = ExpectedCall(c.m, call);
  const std::string kernel = call.type == verifier::CallType::kKernel ? call.kernel : "";
  const kernels::KernelSpec* spec = kernel.empty() ? nullptr : kernels::FindKernel(kernel);
  const std::optional<kernels::KernelId> id = spec ? std::optional(spec->id) : std::nullopt;
  if (pc.kernel != kernel || pc.kernel_id != id || pc.scalars != want.scalars) {
    c.Add(PlanViolationKind::kArgs, "call {} ({}): kernel or scalars differ from the manifest's",
          Index(pc.id), pc.ptr);
    return;
  }
  if (pc.args != want.args) {
    c.Add(PlanViolationKind::kArgs, "call {} ({}): buffer arguments differ from the manifest's",
          Index(pc.id), pc.ptr);
    return;
  }
  for (const PlannedArg& a : pc.args) {
    const PlannedBuffer& b = c.plan.buffer(a.buffer);
    if (!a.bytes) {
      c.Add(PlanViolationKind::kArgs, "call {} ({}) param {}: its extent does not evaluate",
            Index(pc.id), pc.ptr, a.param);
      continue;
    }
    if (*a.bytes <= b.bytes) continue;
    c.Add(PlanViolationKind::kArgs, "call {} ({}) param {}: touches {} bytes of {}, which has {}",
          Index(pc.id), pc.ptr, a.param, *a.bytes, b.name, b.bytes);
  }
}

}  // namespace

// Runs after CheckCalls found the clock equal to the derive programs' calls.
void CheckArgs(Ctx& c) {
  uint32_t t = 0;
  for (const std::string& name : c.plan.derive_order) {
    const verifier::Program* p = c.m.FindProgram(name);
    if (p == nullptr) continue;
    for (const verifier::Call& call : p->calls) {
      if (t >= c.plan.calls.size()) return;
      CheckOne(c, c.plan.calls[t++], call);
    }
  }
}

}  // namespace loadplan::simulator::checkdetail
