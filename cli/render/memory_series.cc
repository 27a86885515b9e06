// The memory series of a plan (resident weights and carries, the arena live at each
// clock time) and its staged buffers in arrival order.
#include "cli/render/memory_series.h"

#include <algorithm>

namespace loadplan::render {

std::optional<MemorySeries> ComputeMemorySeries(const simulator::LoadPlan& plan) {
  MemorySeries s;
  s.arena_live.assign(plan.calls.size(), 0);
  for (const auto& b : plan.buffers) {
    if (b.residence == simulator::Residence::kResident) {
      uint64_t& sum = b.kind == verifier::BufferKind::kWeight ? s.weight_bytes : s.carry_bytes;
      if (__builtin_add_overflow(sum, b.bytes, &sum)) return std::nullopt;
      continue;
    }
    if (b.residence != simulator::Residence::kStaged) continue;
    const size_t end = std::min<size_t>(simulator::Index(b.window_end), s.arena_live.size());
    for (size_t t = simulator::Index(b.window_begin); t < end; ++t) {
      if (__builtin_add_overflow(s.arena_live[t], b.bytes, &s.arena_live[t])) return std::nullopt;
    }
  }
  for (const uint64_t v : s.arena_live) s.peak_arena_live = std::max(s.peak_arena_live, v);
  return s;
}

std::vector<simulator::BufferId> StagedBuffers(const simulator::LoadPlan& plan) {
  std::vector<simulator::BufferId> out;
  std::vector<bool> seen(plan.buffers.size(), false);
  auto take = [&](uint32_t i) {
    if (i >= plan.buffers.size() || seen[i]) return;
    if (plan.buffers[i].residence != simulator::Residence::kStaged) return;
    seen[i] = true;
    out.push_back(simulator::BufferId{i});
  };
  for (const simulator::BufferId i : plan.arrival) take(simulator::Index(i));
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) take(i);  // any the arrival list misses
  return out;
}

}  // namespace loadplan::render
