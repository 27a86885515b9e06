// The plan checker: indices, buffers against the manifest, the clock against derive calls.
#include "simulator/check/plan_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "simulator/check/plan_check_internal.h"

namespace loadplan::simulator {
namespace checkdetail {
namespace {

using verifier::BufferKind;

template <class Id>
bool InRange(std::optional<Id> id, size_t n) {
  return id && Index(*id) < n;
}

void CheckStepIndices(Ctx& c, uint32_t i, const Step& s, bool& ok) {
  const LoadPlan& p = c.plan;
  auto bad = [&](std::string_view what) {
    c.Add(PlanViolationKind::kIndex, "step {}: {}", i, what);
    ok = false;
  };
  const bool needs_buffer = s.kind == StepKind::kFill || s.kind == StepKind::kRelease;
  if (needs_buffer && !InRange(s.buffer, p.buffers.size()))
    bad("buffer index missing or out of range");
  if (s.kind == StepKind::kLaunch && !InRange(s.call, p.calls.size()))
    bad("call index missing or out of range");
  if (s.kind == StepKind::kFill && !InRange(s.lane, p.lanes)) bad("lane missing or >= lanes");
  for (StepIndex w : s.waits) {
    if (Index(w) >= i) bad(fmt::format("waits for step {}, which is not earlier", Index(w)));
  }
}

// Expected reads/writes of one derive call, recomputed from the manifest (the checker
// must not trust the plan's own lists).
void ExpectedAccess(const verifier::Manifest& m, const verifier::Call& call,
                    std::set<BufferId>& reads, std::set<BufferId>& writes) {
  auto id = [&](const verifier::Buffer* b) {
    return BufferId{static_cast<uint32_t>(b - m.buffers.data())};
  };
  if (call.type == verifier::CallType::kCollective) {
    if (const verifier::Buffer* b = m.FindBuffer(call.buffer)) {
      reads.insert(id(b));
      writes.insert(id(b));
    }
    return;
  }
  const verifier::Kernel* k = m.FindKernel(call.kernel);
  for (const verifier::Arg& a : call.args) {
    const verifier::Param* prm =
        (k != nullptr && a.buffer) ? verifier::FindParam(*k, a.param) : nullptr;
    const verifier::Buffer* b = a.buffer ? m.FindBuffer(*a.buffer) : nullptr;
    if (prm == nullptr || b == nullptr) continue;
    if (verifier::Reads(prm->access)) reads.insert(id(b));
    if (verifier::Writes(prm->access)) writes.insert(id(b));
  }
}

std::optional<std::vector<uint64_t>> FixedShape(const verifier::Buffer& b) {
  std::vector<uint64_t> dims;
  for (const verifier::Expr& d : b.shape) {
    const std::optional<int64_t> r = verifier::ValueAt(d, {});
    if (!verifier::IsVariableFree(d) || !r || *r < 0) return std::nullopt;
    dims.push_back(static_cast<uint64_t>(*r));
  }
  return dims;
}

bool IdsArePositions(Ctx& c) {
  bool ok = true;
  const LoadPlan& p = c.plan;
  for (uint32_t i = 0; i < p.buffers.size(); ++i) {
    if (Index(p.buffers[i].id) == i) continue;
    c.Add(PlanViolationKind::kIndex, "buffer {}: id {} is not its position {}", p.buffers[i].name,
          Index(p.buffers[i].id), i);
    ok = false;
  }
  for (uint32_t t = 0; t < p.calls.size(); ++t) {
    if (Index(p.calls[t].id) == t) continue;
    c.Add(PlanViolationKind::kIndex, "call {}: id {} is not its position", t, Index(p.calls[t].id));
    ok = false;
  }
  return ok;
}

}  // namespace

bool CheckIndices(Ctx& c) {
  bool ok = IdsArePositions(c);
  const LoadPlan& p = c.plan;
  const size_t nb = p.buffers.size(), nc = p.calls.size();
  for (uint32_t t = 0; t < nc; ++t) {
    for (const auto* list : {&p.calls[t].reads, &p.calls[t].writes}) {
      for (BufferId b : *list) {
        if (Index(b) < nb) continue;
        c.Add(PlanViolationKind::kIndex, "call {}: buffer index {} out of range", t, Index(b));
        ok = false;
      }
    }
    for (const PlannedArg& a : p.calls[t].args) {
      if (Index(a.buffer) < nb) continue;
      c.Add(PlanViolationKind::kIndex, "call {} param {}: buffer index {} out of range", t, a.param,
            Index(a.buffer));
      ok = false;
    }
  }
  for (BufferId a : p.arrival) {
    if (Index(a) >= nb) {
      c.Add(PlanViolationKind::kIndex, "arrival: buffer index {} out of range", Index(a));
      ok = false;
    }
  }
  for (const PlannedBuffer& b : p.buffers) {
    if (b.residence == Residence::kStaged &&
        (Index(b.last_reader) >= nc || Index(b.first_reader) >= nc)) {
      c.Add(PlanViolationKind::kIndex, "source {}: reader {} is not a call", b.name,
            Index(b.last_reader));
      ok = false;
    }
  }
  for (uint32_t i = 0; i < p.steps.size(); ++i) CheckStepIndices(c, i, p.steps[i], ok);
  return ok;
}

void CheckBuffers(Ctx& c) {
  const verifier::Box box = c.m.VarBox();
  if (c.plan.buffers.size() != c.m.buffers.size()) {
    c.Add(PlanViolationKind::kBuffers, "plan has {} buffers, the manifest {}",
          c.plan.buffers.size(), c.m.buffers.size());
    return;
  }
  for (size_t i = 0; i < c.m.buffers.size(); ++i) {
    const verifier::Buffer& mb = c.m.buffers[i];
    const PlannedBuffer& pb = c.plan.buffers[i];
    const BufferKind kind =
        c.plan.naive && mb.kind == BufferKind::kSource ? BufferKind::kWeight : mb.kind;
    if (pb.name != mb.name || pb.kind != kind) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: plan says {} ({})", mb.name, pb.name,
            verifier::BufferKindName(pb.kind));
      continue;
    }
    if (pb.tensor != mb.tensor || pb.tensors != mb.tensors || pb.dtype != mb.dtype ||
        pb.shape != FixedShape(mb) || pb.exported != mb.exported) {
      c.Add(PlanViolationKind::kBuffers,
            "buffer {}: tensor(s), dtype, shape or export differ from the manifest's", mb.name);
    }
    const Residence want = ResidenceOf(kind);
    const bool skipped_source = kind == BufferKind::kSource && pb.residence == Residence::kSkipped;
    if (pb.residence != want && !skipped_source) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: wrong residence for a {}", mb.name,
            verifier::BufferKindName(mb.kind));
    }
    const verifier::Extrema x = verifier::FindExtrema(verifier::ByteSize(mb), box);
    if (x.max && (x.max->value < 0 || pb.bytes < static_cast<uint64_t>(x.max->value))) {
      c.Add(PlanViolationKind::kBuffers, "buffer {}: {} bytes planned, needs up to {}", mb.name,
            pb.bytes, x.max->value);
    }
  }
}

void CheckCalls(Ctx& c) {
  std::set<std::string> derive;
  for (const verifier::Program& p : c.m.programs) {
    if (p.derive) derive.insert(p.name);
  }
  const std::set<std::string> listed(c.plan.derive_order.begin(), c.plan.derive_order.end());
  if (listed != derive || listed.size() != c.plan.derive_order.size()) {
    c.Add(PlanViolationKind::kCalls, "derive_order does not list each derive program exactly once");
  }
  size_t t = 0;
  for (const std::string& name : c.plan.derive_order) {
    const verifier::Program* p = c.m.FindProgram(name);
    if (p == nullptr || !p->derive) continue;
    for (uint32_t i = 0; i < p->calls.size(); ++i, ++t) {
      if (t >= c.plan.calls.size()) break;
      const PlannedCall& pc = c.plan.calls[t];
      std::set<BufferId> reads, writes;
      ExpectedAccess(c.m, p->calls[i], reads, writes);
      const bool same = pc.program == name && pc.call_in_program == i &&
                        std::set<BufferId>(pc.reads.begin(), pc.reads.end()) == reads &&
                        std::set<BufferId>(pc.writes.begin(), pc.writes.end()) == writes;
      if (!same)
        c.Add(PlanViolationKind::kCalls, "call {}: expected {} call {} with its reads and writes",
              t, name, i);
    }
  }
  if (t != c.plan.calls.size()) {
    c.Add(PlanViolationKind::kCalls, "the clock has {} calls, the derive programs {}",
          c.plan.calls.size(), t);
  }
  // Producers precede consumers: every carry read at t was written by a call before t.
  std::vector<std::optional<uint32_t>> first_writer(c.plan.buffers.size());
  for (uint32_t u = 0; u < c.plan.calls.size(); ++u) {
    const PlannedCall& pc = c.plan.calls[u];
    for (BufferId r : pc.reads) {
      if (c.plan.buffer(r).kind != BufferKind::kCarry) continue;
      if (!first_writer[Index(r)] || *first_writer[Index(r)] >= u) {
        c.Add(PlanViolationKind::kProducer,
              "call {} ({} call {}): reads carry {} before any derive call writes it", u,
              pc.program, pc.call_in_program, c.Name(r));
      }
    }
    for (BufferId w : pc.writes) {
      if (!first_writer[Index(w)]) first_writer[Index(w)] = u;
    }
  }
}

StepSites IndexSteps(const LoadPlan& plan) {
  StepSites s;
  s.fills.resize(plan.buffers.size());
  s.releases.resize(plan.buffers.size());
  s.launches.resize(plan.calls.size());
  for (uint32_t n = 0; n < plan.steps.size(); ++n) {
    const Step& st = plan.steps[n];
    const uint32_t i = n;
    switch (st.kind) {
      case StepKind::kAllocResident: s.alloc_resident.push_back(i); break;
      case StepKind::kAllocArena: s.alloc_arena.push_back(i); break;
      case StepKind::kFreeArena: s.free_arena.push_back(i); break;
      case StepKind::kFill: s.fills[Index(*st.buffer)].push_back(i); break;
      case StepKind::kRelease: s.releases[Index(*st.buffer)].push_back(i); break;
      case StepKind::kLaunch: s.launches[Index(*st.call)].push_back(i); break;
    }
  }
  return s;
}

}  // namespace checkdetail

std::string_view PlanViolationKindName(PlanViolationKind k) {
  static constexpr std::string_view kNames[] = {
      "index", "buffers",  "calls", "args",        "overlap",   "window",
      "arena", "producer", "steps", "launch-wait", "fill-wait", "release-wait"};
  return kNames[static_cast<size_t>(k)];
}

std::vector<PlanViolation> CheckPlan(const verifier::Manifest& in, const LoadPlan& plan) {
  std::optional<verifier::Manifest> copy;
  const verifier::Manifest& m = verifier::InNameOrder(in, copy);  // a plan's indices follow it
  std::vector<PlanViolation> out;
  checkdetail::Ctx c{m, plan, out};
  if (!checkdetail::CheckIndices(c)) return out;
  checkdetail::CheckBuffers(c);
  checkdetail::CheckSlices(c);
  checkdetail::CheckCalls(c);
  if (!out.empty()) return out;  // arguments, layout and steps are judged against a matching clock
  checkdetail::CheckArgs(c);
  checkdetail::CheckLayout(c);
  const checkdetail::StepSites s = checkdetail::IndexSteps(plan);
  checkdetail::CheckSteps(c, s);
  checkdetail::CheckWaits(c, s);
  return out;
}

}  // namespace loadplan::simulator
