// The planner's calls: derive programs in dataflow order, each call resolved to what a
// backend launches (kernel, evaluated scalars, buffer arguments with byte extents).
#include <algorithm>
#include <functional>
#include <queue>

#include "simulator/plan_internal.h"

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
    const verifier::EvalResult v = verifier::Evaluate(*a.scalar, {});
    const int64_t value = v.value.value_or(0);  // derive scalars are variable-free (P4)
    out.scalars.push_back({.param = a.param, .value = value});
    values[a.param] = value;
  }
}

void PlanArgs(const verifier::Manifest& m, const verifier::Call& c, PlannedCall& out) {
  const verifier::Kernel* k = m.FindKernel(c.kernel);
  if (k == nullptr) return;
  verifier::Assignment scalars;
  PlanScalars(c, out, scalars);
  for (const verifier::Arg& a : c.args) {
    if (!a.buffer) continue;
    const verifier::Param* prm = verifier::FindParam(*k, a.param);
    const verifier::Buffer* b = m.FindBuffer(*a.buffer);
    if (prm == nullptr || b == nullptr) continue;
    const BufferId id = IdOf(m, b);
    out.args.push_back({.param = a.param, .buffer = id, .access = prm->access, .bytes = verifier::ExtentBytes(*prm, scalars).value_or(UINT64_MAX)});
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

// Lexicographically smallest topological order of derive programs (indices are name order,
// and std::string compares bytewise): the order verifier::OrderDerivePrograms defines,
// computed on indices because at 100k programs the string-keyed version dominates planning.
// Programs on or behind a cycle (rejected by the verifier) are left out, as there.
std::vector<uint32_t> OrderPrograms(const verifier::Manifest& m, const std::vector<uint32_t>& derive,
                                    const std::vector<std::vector<PlannedCall>>& calls) {
  std::vector<std::vector<uint32_t>> writers(m.buffers.size());
  for (uint32_t k = 0; k < derive.size(); ++k) {
    for (const PlannedCall& c : calls[k]) {
      for (BufferId w : c.writes) {
        if (m.buffers[Index(w)].kind == verifier::BufferKind::kCarry) writers[Index(w)].push_back(k);
      }
    }
  }
  std::vector<std::vector<uint32_t>> succ(derive.size());
  std::vector<uint32_t> indegree(derive.size(), 0);
  for (uint32_t k = 0; k < derive.size(); ++k) {
    std::vector<uint32_t> preds;
    for (const PlannedCall& c : calls[k]) {
      for (BufferId r : c.reads) preds.insert(preds.end(), writers[Index(r)].begin(), writers[Index(r)].end());
    }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (uint32_t w : preds) {
      if (w == k) continue;
      succ[w].push_back(k);
      ++indegree[k];
    }
  }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t k = 0; k < derive.size(); ++k) {
    if (indegree[k] == 0) ready.push(k);
  }
  std::vector<uint32_t> order;
  while (!ready.empty()) {
    const uint32_t k = ready.top();
    ready.pop();
    order.push_back(k);
    for (uint32_t s : succ[k]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  return order;
}

}  // namespace

std::vector<PlannedCall> BuildCalls(const verifier::Manifest& m, std::vector<std::string>& order) {
  std::vector<uint32_t> derive;
  for (uint32_t p = 0; p < m.programs.size(); ++p) {
    if (m.programs[p].derive && !m.programs[p].malformed) derive.push_back(p);
  }
  std::vector<std::vector<PlannedCall>> per_program(derive.size());
  for (uint32_t k = 0; k < derive.size(); ++k) {
    const verifier::Program& p = m.programs[derive[k]];
    for (uint32_t i = 0; i < p.calls.size(); ++i) per_program[k].push_back(PlanCall(m, p, i));
  }
  std::vector<PlannedCall> calls;
  order.clear();
  for (uint32_t k : OrderPrograms(m, derive, per_program)) {
    order.push_back(m.programs[derive[k]].name);
    for (PlannedCall& c : per_program[k]) {
      c.id = CallId{static_cast<uint32_t>(calls.size())};
      calls.push_back(std::move(c));
    }
  }
  return calls;
}

}  // namespace loadplan::simulator::detail
