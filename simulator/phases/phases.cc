// The memory simulator's symbolic side: per-phase byte expressions and their extrema.
#include "simulator/phases/phases.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "base/bytes.h"
#include "simulator/planner/planner.h"

namespace loadplan::simulator {
namespace {

using verifier::BufferKind;
using verifier::Expr;

int64_t ToI64(uint64_t v) {
  return static_cast<int64_t>(std::min<uint64_t>(v, std::numeric_limits<int64_t>::max()));
}

// base + the buffers' byte sizes, simplified; flat however many buffers (verifier::Sum).
Expr SumBytes(Expr base, const std::vector<const verifier::Buffer*>& buffers) {
  std::vector<Expr> terms;
  terms.reserve(buffers.size() + 1);
  terms.push_back(std::move(base));
  for (const verifier::Buffer* b : buffers) terms.push_back(verifier::ByteSize(*b));
  return verifier::Sum(terms);
}

std::optional<PhaseBound> Bound(const std::optional<verifier::Extremum>& e) {
  if (!e) return std::nullopt;
  return PhaseBound{.value = e->value, .at = e->at, .exact = e->exact};
}

// The range of `e` with the user's values pinned and the other variables free.
std::optional<verifier::Range> RangeAt(const Expr& e, const verifier::Box& box,
                                       const verifier::Assignment& at,
                                       const verifier::ProofBudget& budget) {
  verifier::Box pinned = box;
  for (const auto& [name, value] : at) {
    auto it = pinned.find(name);
    if (it != pinned.end()) it->second = verifier::Range{value, value};
  }
  const verifier::Extrema x = verifier::FindExtrema(e, pinned, budget);
  if (!x.min || !x.max) return std::nullopt;
  return verifier::Range{x.min->value, x.max->value};
}

PhasePeak MakePhase(std::string name, Expr bytes, const verifier::Box& box,
                    const verifier::Assignment& at, const verifier::ProofBudget& budget) {
  PhasePeak p{.name = std::move(name),
              .bytes = std::move(bytes),
              .min = {},
              .max = {},
              .at = {},
              .error = {}};
  const verifier::Extrema x = verifier::FindExtrema(p.bytes, box, budget);
  p.min = Bound(x.min);
  p.max = Bound(x.max);
  p.error = x.error;
  p.at = RangeAt(p.bytes, box, at, budget);
  return p;
}

std::vector<const verifier::Buffer*> OfKind(const verifier::Manifest& m, BufferKind k) {
  std::vector<const verifier::Buffer*> out;
  for (const verifier::Buffer& b : m.buffers) {
    if (b.kind == k) out.push_back(&b);
  }
  return out;
}

uint64_t AlignedTotal(const LoadPlan& plan, BufferKind k) {
  uint64_t total = 0;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.kind != k) continue;
    const uint64_t a = base::RoundUp(b.bytes, plan.alignment);
    total = std::min<uint64_t>(total + a, std::numeric_limits<int64_t>::max());
  }
  return total;
}

std::vector<KindTotal> Kinds(const verifier::Manifest& m, const LoadPlan& plan,
                             const verifier::Box& box) {
  std::vector<KindTotal> out;
  auto constant = [&](std::string kind, uint64_t v) {
    const int64_t i = ToI64(v);
    out.push_back(KindTotal{std::move(kind), Expr::Const(i), verifier::Range{i, i}});
  };
  constant("weight", AlignedTotal(plan, BufferKind::kWeight));
  constant("carry", AlignedTotal(plan, BufferKind::kCarry));
  constant("arena", plan.arena_bytes_rounded);
  const std::pair<const char*, BufferKind> serve[] = {{"state", BufferKind::kState},
                                                      {"scratch", BufferKind::kScratch},
                                                      {"input", BufferKind::kInput},
                                                      {"output", BufferKind::kOutput}};
  for (const auto& [name, kind] : serve) {
    KindTotal t{name, SumBytes(Expr::Const(0), OfKind(m, kind)), std::nullopt};
    const verifier::Extrema x = verifier::FindExtrema(t.bytes, box);
    if (x.min && x.max) t.range = verifier::Range{x.min->value, x.max->value};
    out.push_back(std::move(t));
  }
  return out;
}

uint64_t NaivePeak(const LoadPlan& plan) {
  uint64_t total = plan.resident_bytes;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.kind != BufferKind::kSource) continue;
    const uint64_t a = base::RoundUp(b.bytes, plan.alignment);
    if (__builtin_add_overflow(total, a, &total)) return UINT64_MAX;
  }
  return base::RoundUp(total, plan.granularity);
}

}  // namespace

std::vector<const verifier::Buffer*> ServeBuffers(const verifier::Manifest& m) {
  std::vector<const verifier::Buffer*> out;
  for (const verifier::Buffer& b : m.buffers) {
    if (b.kind == BufferKind::kState || b.kind == BufferKind::kScratch ||
        b.kind == BufferKind::kInput || b.kind == BufferKind::kOutput) {
      out.push_back(&b);
    }
  }
  return out;
}

std::vector<const verifier::Buffer*> OnceScratch(const verifier::Manifest& m) {
  std::set<std::string> names;
  for (const verifier::Program& p : m.programs) {
    if (!p.once) continue;
    for (const verifier::Call& c : p.calls) {
      if (c.type == verifier::CallType::kCollective) names.insert(c.buffer);
      for (const verifier::Arg& a : c.args) {
        if (a.buffer) names.insert(*a.buffer);
      }
    }
  }
  std::vector<const verifier::Buffer*> out;
  for (const std::string& n : names) {
    const verifier::Buffer* b = m.FindBuffer(n);
    if (b != nullptr && b->kind == BufferKind::kScratch) out.push_back(b);
  }
  return out;
}

MemoryPhases ComputePhases(const verifier::Manifest& in, const LoadPlan& plan,
                           const verifier::Assignment& at, const verifier::ProofBudget& budget) {
  std::optional<verifier::Manifest> copy;
  const verifier::Manifest& m = verifier::InNameOrder(in, copy);  // the plan's indices follow it
  const verifier::Box box = m.VarBox();
  const int64_t resident = ToI64(plan.resident_bytes_rounded);
  MemoryPhases out;
  out.phases.push_back(
      MakePhase("load", Expr::Const(ToI64(plan.resident_bytes_rounded + plan.arena_bytes_rounded)),
                box, at, budget));
  out.phases.push_back(
      MakePhase("once", SumBytes(Expr::Const(resident), OnceScratch(m)), box, at, budget));
  out.phases.push_back(
      MakePhase("serve", SumBytes(Expr::Const(resident), ServeBuffers(m)), box, at, budget));
  for (const PhasePeak& p : out.phases) {
    if (p.max && (!out.peak || p.max->value > out.peak->value)) {
      out.peak = p.max;
      out.peak_phase = p.name;
    }
    if (p.at) {
      if (!out.peak_at) out.peak_at = p.at;
      out.peak_at->min = std::max(out.peak_at->min, p.at->min);
      out.peak_at->max = std::max(out.peak_at->max, p.at->max);
    }
  }
  out.naive_peak = NaivePeak(plan);
  out.kinds = Kinds(m, plan, box);
  return out;
}

std::optional<WidestMoment> FindWidestMoment(const LoadPlan& plan) {
  if (plan.arrival.empty()) return std::nullopt;
  std::vector<uint64_t> add(plan.calls.size() + 1), sub(plan.calls.size() + 1);
  for (BufferId i : plan.arrival) {
    const PlannedBuffer& b = plan.buffer(i);
    const uint64_t a = base::RoundUp(b.bytes, plan.alignment);
    add[Index(b.window_begin)] += a;
    sub[Index(b.window_end)] += a;
  }
  WidestMoment w;
  uint64_t live = 0;
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    live = live + add[t] - sub[t];
    if (live > w.bytes) w = WidestMoment{ClockTime{t}, live, {}};
  }
  for (BufferId i : plan.arrival) {
    const PlannedBuffer& b = plan.buffer(i);
    if (b.window_begin <= w.time && w.time < b.window_end) w.live.push_back(i);
  }
  return w;
}

}  // namespace loadplan::simulator
