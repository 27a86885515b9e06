// The load planner: derive order, the clock, buffers and their sizes; drives plan_*.cc.
#include "simulator/planner.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>

#include "simulator/plan_internal.h"

namespace loadplan::simulator {

uint64_t RoundUpBytes(uint64_t bytes, uint64_t to) {
  if (to <= 1 || bytes % to == 0) return bytes;
  const uint64_t up = bytes / to * to;
  return detail::AddSat(up, to);
}

std::optional<uint64_t> MaxBufferBytes(const verifier::Buffer& b, const verifier::Box& box) {
  const verifier::Expr bytes = verifier::ByteSize(b);
  if (verifier::IsVariableFree(bytes)) {
    const verifier::EvalResult r = verifier::Evaluate(bytes, {});
    if (!r.value || *r.value < 0) return std::nullopt;
    return static_cast<uint64_t>(*r.value);
  }
  const verifier::Extrema e = verifier::FindExtrema(bytes, box);
  if (e.max) return static_cast<uint64_t>(std::max<int64_t>(0, e.max->value));
  const std::optional<verifier::Range> r = verifier::IntervalBounds(bytes, box);
  if (r) return static_cast<uint64_t>(std::max<int64_t>(0, r->max));
  return std::nullopt;
}

namespace detail {
namespace {

uint32_t IndexOf(const verifier::Manifest& m, const verifier::Buffer* b) {
  return static_cast<uint32_t>(b - m.buffers.data());
}

void SortUnique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

PlannedCall PlanCall(const verifier::Manifest& m, const verifier::Program& p, uint32_t i) {
  const verifier::Call& c = p.calls[i];
  PlannedCall out{.program = p.name, .index = i, .ptr = c.ptr, .reads = {}, .writes = {}};
  if (c.type == verifier::CallType::kCollective) {  // derive runs none (P3); be safe anyway
    if (const verifier::Buffer* b = m.FindBuffer(c.buffer)) {
      out.reads.push_back(IndexOf(m, b));
      out.writes.push_back(IndexOf(m, b));
    }
    return out;
  }
  const verifier::Kernel* k = m.FindKernel(c.kernel);
  for (const verifier::Arg& a : c.args) {
    if (!a.buffer || k == nullptr) continue;
    const verifier::Param* prm = verifier::FindParam(*k, a.param);
    const verifier::Buffer* b = m.FindBuffer(*a.buffer);
    if (prm == nullptr || b == nullptr) continue;
    if (verifier::Reads(prm->access)) out.reads.push_back(IndexOf(m, b));
    if (verifier::Writes(prm->access)) out.writes.push_back(IndexOf(m, b));
  }
  SortUnique(out.reads);
  SortUnique(out.writes);
  return out;
}

Residence ResidenceOf(verifier::BufferKind k) {
  using verifier::BufferKind;
  switch (k) {
    case BufferKind::kWeight:
    case BufferKind::kCarry: return Residence::kResident;
    case BufferKind::kSource: return Residence::kStaged;
    case BufferKind::kPeer: return Residence::kPeer;
    default: return Residence::kServe;
  }
}

}  // namespace

namespace {

// Lexicographically smallest topological order of derive programs (indices are name order,
// and std::string compares bytewise): the order verifier::OrderDerivePrograms defines,
// computed on indices because at 100k programs the string-keyed version dominates planning.
// Programs on or behind a cycle (rejected by the verifier) are left out, as there.
std::vector<uint32_t> OrderPrograms(const verifier::Manifest& m, const std::vector<uint32_t>& derive,
                                    const std::vector<std::vector<PlannedCall>>& calls) {
  std::vector<std::vector<uint32_t>> writers(m.buffers.size());
  for (uint32_t k = 0; k < derive.size(); ++k) {
    for (const PlannedCall& c : calls[k]) {
      for (uint32_t w : c.writes) {
        if (m.buffers[w].kind == verifier::BufferKind::kCarry) writers[w].push_back(k);
      }
    }
  }
  std::vector<std::vector<uint32_t>> succ(derive.size());
  std::vector<uint32_t> indegree(derive.size(), 0);
  for (uint32_t k = 0; k < derive.size(); ++k) {
    std::vector<uint32_t> preds;
    for (const PlannedCall& c : calls[k]) {
      for (uint32_t r : c.reads) preds.insert(preds.end(), writers[r].begin(), writers[r].end());
    }
    SortUnique(preds);
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
    for (PlannedCall& c : per_program[k]) calls.push_back(std::move(c));
  }
  return calls;
}

std::vector<PlannedBuffer> BuildBuffers(const verifier::Manifest& m) {
  const verifier::Box box = m.VarBox();
  std::vector<PlannedBuffer> out;
  out.reserve(m.buffers.size());
  for (const verifier::Buffer& b : m.buffers) {
    PlannedBuffer pb{.name = b.name, .kind = b.kind, .residence = ResidenceOf(b.kind)};
    pb.bytes = MaxBufferBytes(b, box).value_or(UINT64_MAX);
    pb.tensor = b.tensor;
    pb.lane = b.lane;  // explicit pins; AssignWindowsAndLanes deals the rest
    out.push_back(std::move(pb));
  }
  return out;
}

}  // namespace detail

LoadPlan Plan(const verifier::Manifest& in, const PlanOptions& options) {
  std::optional<verifier::Manifest> copy;
  const verifier::Manifest& verified = verifier::InNameOrder(in, copy);
  LoadPlan plan;
  plan.manifest_name = verified.name;
  plan.lanes = std::max<uint32_t>(1, options.lanes.value_or(verified.load.lanes));
  plan.prefetch = options.prefetch.value_or(verified.load.prefetch);
  plan.alignment = std::max<uint64_t>(1, options.alignment);
  plan.granularity = std::max<uint64_t>(1, options.granularity);
  plan.placement = std::string(PlacementPolicyName(options.placement));
  plan.calls = detail::BuildCalls(verified, plan.derive_order);
  plan.buffers = detail::BuildBuffers(verified);
  detail::AssignWindowsAndLanes(plan);
  detail::AssignOffsets(plan, options);
  plan.steps = detail::BuildSteps(plan);
  return plan;
}

}  // namespace loadplan::simulator
