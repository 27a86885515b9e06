// The plan checker: windows cover readers, no two live sources share bytes, arena and
// pool sizes hold what is placed in them, and the lower bound is the widest live set.
#include <algorithm>
#include <set>

#include "simulator/check/placement_check.h"
#include "simulator/check/plan_check_internal.h"

namespace loadplan::simulator::checkdetail {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

void CheckWindows(Ctx& c) {
  const LoadPlan& p = c.plan;
  std::vector<uint32_t> first(p.buffers.size(), kNone), last(p.buffers.size(), kNone);
  for (uint32_t t = 0; t < p.calls.size(); ++t) {
    for (BufferId r : p.calls[t].reads) {
      if (first[Index(r)] == kNone) first[Index(r)] = t;
      last[Index(r)] = t;
    }
  }
  std::set<BufferId> staged;
  for (uint32_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer& b = p.buffers[i];
    if (b.kind != verifier::BufferKind::kSource) continue;
    const bool read = first[i] != kNone;
    if (read != (b.residence == Residence::kStaged)) {
      c.Add(PlanViolationKind::kBuffers, "source {}: {}", b.name,
            read ? "read by derive call " + std::to_string(first[i]) + " but not staged"
                 : "staged but never read");
      continue;
    }
    if (!read) continue;
    staged.insert(b.id);
    const uint32_t begin = Index(b.window_begin), end = Index(b.window_end);
    if (!(begin <= first[i] && last[i] < end)) {
      c.Add(PlanViolationKind::kWindow,
            "source {}: window [{}, {}) does not cover its readers {}..{}", b.name, begin, end,
            first[i], last[i]);
    }
    if (Index(b.first_reader) != first[i] || Index(b.last_reader) != last[i]) {
      c.Add(PlanViolationKind::kWindow, "source {}: readers recorded as {}..{}, actually {}..{}",
            b.name, Index(b.first_reader), Index(b.last_reader), first[i], last[i]);
    }
  }
  const std::set<BufferId> arrival(p.arrival.begin(), p.arrival.end());
  if (arrival != staged || arrival.size() != p.arrival.size()) {
    c.Add(PlanViolationKind::kBuffers, "arrival does not list each staged source exactly once");
  }
}

// No two live sources share bytes, each is aligned and inside the arena: CheckPlacement
// over the staged buffers (windows as lifetimes, exact byte sizes).
void CheckOverlap(Ctx& c) {
  const LoadPlan& p = c.plan;
  std::vector<PlacedBuffer> placed;
  for (const PlannedBuffer& b : p.buffers) {
    if (b.residence != Residence::kStaged) continue;
    placed.push_back(PlacedBuffer{.id = b.name,
                                  .lower = Index(b.window_begin),
                                  .upper = Index(b.window_end),
                                  .size = b.bytes,
                                  .offset = b.offset});
  }
  const PlacementCheckOptions options{
      .height = p.arena_bytes, .alignment = p.alignment, .max_violations = 100};
  for (const PlacementViolation& v : CheckPlacement(placed, options)) {
    const PlanViolationKind kind = v.kind == PlacementViolationKind::kOverlap
                                       ? PlanViolationKind::kOverlap
                                       : PlanViolationKind::kArena;
    c.Add(kind, "staging arena: {}", v.message);
  }
}

void CheckSizes(Ctx& c) {
  const LoadPlan& p = c.plan;
  std::vector<uint32_t> pool;
  for (uint32_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer& b = p.buffers[i];
    if (b.residence != Residence::kResident) continue;
    if (p.alignment > 1 && b.offset % p.alignment != 0) {
      c.Add(PlanViolationKind::kArena, "buffer {}: offset {} is not a multiple of {}", b.name,
            b.offset, p.alignment);
    }
    pool.push_back(i);
  }
  std::sort(pool.begin(), pool.end(),
            [&](uint32_t a, uint32_t b) { return p.buffers[a].offset < p.buffers[b].offset; });
  uint64_t pool_end = 0;
  for (size_t k = 0; k < pool.size(); ++k) {
    const PlannedBuffer& b = p.buffers[pool[k]];
    if (k > 0 && b.offset < pool_end && b.bytes > 0) {
      c.Add(PlanViolationKind::kOverlap, "resident buffer {} at {} overlaps the one before it",
            b.name, b.offset);
    }
    pool_end = std::max(pool_end, AddSat(b.offset, b.bytes));
  }
  if (p.resident_bytes < pool_end) {
    c.Add(PlanViolationKind::kArena, "resident_bytes {} < {} (the end of a resident buffer)",
          p.resident_bytes, pool_end);
  }
  const uint64_t g = std::max<uint64_t>(1, p.granularity);
  if (p.arena_bytes_rounded != RoundUp(p.arena_bytes, g) ||
      p.resident_bytes_rounded != RoundUp(p.resident_bytes, g)) {
    c.Add(PlanViolationKind::kArena, "rounded sizes are not the sizes rounded up to {} bytes", g);
  }
}

// The lower bound is the widest live set of aligned source sizes; it cannot exceed the arena.
void CheckLowerBound(Ctx& c) {
  const LoadPlan& p = c.plan;
  std::vector<uint64_t> add(p.calls.size() + 1), sub(p.calls.size() + 1);
  for (const PlannedBuffer& b : p.buffers) {
    if (b.residence != Residence::kStaged || b.window_begin >= b.window_end) continue;
    add[std::min<size_t>(Index(b.window_begin), p.calls.size())] += RoundUp(b.bytes, p.alignment);
    sub[std::min<size_t>(Index(b.window_end), p.calls.size())] += RoundUp(b.bytes, p.alignment);
  }
  uint64_t live = 0, widest = 0;
  for (size_t t = 0; t <= p.calls.size(); ++t) {
    live = live + add[t] - sub[t];
    widest = std::max(widest, live);
  }
  if (p.lower_bound != widest || p.lower_bound > p.arena_bytes) {
    c.Add(PlanViolationKind::kArena, "lower_bound {} but the widest live set is {} (arena {})",
          p.lower_bound, widest, p.arena_bytes);
  }
}

}  // namespace

void CheckLayout(Ctx& c) {
  CheckWindows(c);
  CheckOverlap(c);
  CheckSizes(c);
  CheckLowerBound(c);
}

}  // namespace loadplan::simulator::checkdetail
