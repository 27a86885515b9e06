// The planner's calls: the derive programs in the verifier's dataflow order
// (VerifiedManifest::derive_order, computed once by verifier/derive_order.h), each call resolved
// to what a backend launches (kernel, evaluated scalars, buffer arguments with byte extents).
#include <algorithm>

#include "simulator/planner/internal.h"

namespace loadplan::simulator::detail {
namespace {

BufferId IdOf(const verifier::Manifest& m, const verifier::Buffer* b) {
  return BufferId{static_cast<uint32_t>(b - m.buffers.data())};
}

void SortUnique(std::vector<BufferId>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

void PlanScalars(const verifier::Call& c, PlannedCall& out, verifier::Assignment& values) {
  for (const verifier::Arg& a : c.args) {
    if (!a.scalar) continue;
    const std::optional<int64_t> v = verifier::ValueAt(*a.scalar, {});
    const int64_t value = v.value_or(0);  // derive scalars are variable-free (P4)
    out.scalars.push_back({.param = a.param, .value = value});
    values[a.param] = value;
  }
}

void PlanArgs(const verifier::Manifest& m, const verifier::Call& c, PlannedCall& out) {
  const verifier::Kernel* k = m.FindKernel(c.kernel);
  if (k == nullptr) return;
  verifier::Assignment scalars;
  out.scalars.reserve(c.args.size());
  out.args.reserve(c.args.size());
  out.reads.reserve(c.args.size());
  out.writes.reserve(c.args.size());
  PlanScalars(c, out, scalars);
  for (const verifier::Arg& a : c.args) {
    if (!a.buffer) continue;
    const verifier::Param* prm = verifier::FindParam(*k, a.param);
    const verifier::Buffer* b = m.FindBuffer(*a.buffer);
    if (prm == nullptr || b == nullptr) continue;
    const BufferId id = IdOf(m, b);
    out.args.push_back({.param = a.param,
                        .buffer = id,
                        .access = prm->access,
                        .bytes = verifier::ExtentBytes(*prm, scalars)});
    if (verifier::Reads(prm->access)) out.reads.push_back(id);
    if (verifier::Writes(prm->access)) out.writes.push_back(id);
  }
}

PlannedCall PlanCall(const verifier::Manifest& m, const verifier::Program& p, uint32_t i) {
  const verifier::Call& c = p.calls[i];
  PlannedCall out{.program = p.name, .call_in_program = i, .ptr = c.ptr};
  if (c.type == verifier::CallType::kCollective) {  // derive runs none (P3); be safe anyway
    if (const verifier::Buffer* b = m.FindBuffer(c.buffer)) {
      out.reads.push_back(IdOf(m, b));
      out.writes.push_back(IdOf(m, b));
    }
    return out;
  }
  out.kernel = c.kernel;
  if (const kernels::KernelSpec* spec = kernels::FindKernel(c.kernel)) out.kernel_id = spec->id;
  PlanArgs(m, c, out);
  SortUnique(out.reads);
  SortUnique(out.writes);
  return out;
}

}  // namespace

std::vector<PlannedCall> BuildCalls(const verifier::Manifest& m,
                                    const std::vector<std::string>& order) {
  std::vector<PlannedCall> calls;
  for (const std::string& name : order) {
    const verifier::Program* p = m.FindProgram(name);
    if (p == nullptr || !p->derive)
      continue;  // a VerifiedManifest's order names its derive programs
    for (uint32_t i = 0; i < p->calls.size(); ++i) {
      PlannedCall c = PlanCall(m, *p, i);
      c.id = CallId{static_cast<uint32_t>(calls.size())};
      calls.push_back(std::move(c));
    }
  }
  return calls;
}

}  // namespace loadplan::simulator::detail
