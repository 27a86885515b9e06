// The plan checker: every step present once and inside its window (sequential semantics),
// and the wait edges an asynchronous backend follows (transitively) are sufficient.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "simulator/check/plan_check_internal.h"

namespace loadplan::simulator::checkdetail {
namespace {

using verifier::BufferKind;

bool Once(Ctx& c, const std::vector<uint32_t>& v, std::string_view what) {
  if (v.size() == 1) return true;
  c.Add(PlanViolationKind::kSteps, "{} appears {} times (expected once)", what, v.size());
  return false;
}

void CheckSourceSteps(Ctx& c, const StepSites& s, uint32_t i, uint32_t arena, uint32_t free) {
  const PlannedBuffer& b = c.plan.buffers[i];
  const size_t n = c.plan.calls.size();
  const uint32_t f = s.fills[i][0], r = s.releases[i][0];
  const uint32_t begin = Index(b.window_begin), end = Index(b.window_end);
  const bool fill_ok = f > arena && f < s.launches[Index(b.first_reader)][0] &&
                       (begin == 0 || f > s.launches[std::min<size_t>(begin, n) - 1][0]);
  const bool release_ok =
      r > s.launches[Index(b.last_reader)][0] && r < free && (end >= n || r < s.launches[end][0]);
  if (!fill_ok) {
    c.Add(PlanViolationKind::kWindow, "source {}: fill (step {}) outside window [{}, {})", b.name,
          f, begin, end);
  }
  if (!release_ok) {
    c.Add(PlanViolationKind::kWindow, "source {}: release (step {}) outside window [{}, {})",
          b.name, r, begin, end);
  }
}

void CheckBufferSteps(Ctx& c, const StepSites& s, uint32_t resident, uint32_t arena,
                      uint32_t free) {
  const LoadPlan& p = c.plan;
  std::vector<std::optional<uint32_t>> first_read(p.buffers.size());
  for (uint32_t t = 0; t < p.calls.size(); ++t) {
    for (BufferId r : p.calls[t].reads) first_read[Index(r)] = first_read[Index(r)].value_or(t);
  }
  for (uint32_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer& b = p.buffers[i];
    const bool staged = b.residence == Residence::kStaged, weight = b.kind == BufferKind::kWeight;
    if (!staged && !s.releases[i].empty())
      c.Add(PlanViolationKind::kSteps, "{}: released but not staged", b.name);
    if (!staged && !weight) {
      if (!s.fills[i].empty())
        c.Add(PlanViolationKind::kSteps, "{}: filled but not a weight or staged source", b.name);
      continue;
    }
    if (!Once(c, s.fills[i], "fill of " + b.name)) continue;
    for (uint32_t f : s.fills[i]) {
      if (b.lane && p.steps[f].lane != b.lane) {
        c.Add(PlanViolationKind::kSteps, "{}: filled on lane {}, planned on {}", b.name,
              p.steps[f].lane ? Index(*p.steps[f].lane) : 0, Index(*b.lane));
      }
    }
    if (staged) {
      if (Once(c, s.releases[i], "release of " + b.name)) CheckSourceSteps(c, s, i, arena, free);
    } else if (s.fills[i][0] < resident ||
               (first_read[i] && s.fills[i][0] > s.launches[*first_read[i]][0])) {
      c.Add(PlanViolationKind::kSteps,
            "weight {}: fill (step {}) after its first reader or before the pool", b.name,
            s.fills[i][0]);
    }
  }
}

// Is `target` reachable from `from` through wait edges? A direct wait is found by binary
// search (the planner sorts wait lists) or, in an unsorted list, by a scan. Otherwise edges
// point backwards, so the search never goes below `target`. A step with more than
// kManyWaits waits (FreeArena waits for every release) gets its whole reachable set once,
// kept for the last few such steps: scanning its waits once per staged buffer was
// quadratic (1.1 s at 10^5 sources).
class Reach {
 public:
  explicit Reach(const LoadPlan& plan)
      : plan_(plan), seen_(plan.steps.size(), 0), sorted_(plan.steps.size(), 0) {
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      sorted_[i] = std::is_sorted(plan.steps[i].waits.begin(), plan.steps[i].waits.end()) ? 1 : 0;
    }
  }

  bool operator()(uint32_t from, uint32_t target) {
    const auto& direct = plan_.steps[from].waits;
    const StepIndex want{target};
    const bool hit = sorted_[from] != 0
                         ? std::binary_search(direct.begin(), direct.end(), want)
                         : std::find(direct.begin(), direct.end(), want) != direct.end();
    if (hit) return true;
    if (direct.size() > kManyWaits) return ReachableFrom(from)[target] != 0;
    ++epoch_;
    std::vector<uint32_t> stack{from};
    while (!stack.empty()) {
      const uint32_t at = stack.back();
      stack.pop_back();
      for (StepIndex sw : plan_.steps[at].waits) {
        const uint32_t w = Index(sw);
        if (w == target) return true;
        if (w > target && seen_[w] != epoch_) {
          seen_[w] = epoch_;
          stack.push_back(w);
        }
      }
    }
    return false;
  }

 private:
  static constexpr size_t kManyWaits = 64;
  static constexpr size_t kCached = 4;

  // Every step reachable from `from` (CheckIndices has made every wait an earlier step).
  const std::vector<char>& ReachableFrom(uint32_t from) {
    for (const auto& [step, set] : cache_) {
      if (step == from) return set;
    }
    if (cache_.size() == kCached) cache_.erase(cache_.begin());
    std::vector<char> set(plan_.steps.size(), 0);
    std::vector<uint32_t> stack{from};
    while (!stack.empty()) {
      const uint32_t at = stack.back();
      stack.pop_back();
      for (StepIndex sw : plan_.steps[at].waits) {
        const uint32_t w = Index(sw);
        if (w < set.size() && set[w] == 0) {
          set[w] = 1;
          stack.push_back(w);
        }
      }
    }
    cache_.emplace_back(from, std::move(set));
    return cache_.back().second;
  }

  const LoadPlan& plan_;
  std::vector<uint32_t> seen_;
  uint32_t epoch_ = 0;
  std::vector<char> sorted_;                                   // per step: its wait list is sorted
  std::vector<std::pair<uint32_t, std::vector<char>>> cache_;  // ReachableFrom, oldest first
};

void CheckLaunchWaits(Ctx& c, const StepSites& s, Reach& reach) {
  const LoadPlan& p = c.plan;
  std::vector<std::optional<uint32_t>> writer(p.buffers.size());
  for (uint32_t t = 0; t < p.calls.size(); ++t) {
    const uint32_t launch = s.launches[t][0];
    for (BufferId id : p.calls[t].reads) {
      const uint32_t r = Index(id);
      const PlannedBuffer& b = p.buffers[r];
      std::optional<uint32_t> need;
      if (b.residence == Residence::kStaged || b.kind == BufferKind::kWeight)
        need = s.fills[r][0];
      else if (writer[r])
        need = s.launches[*writer[r]][0];
      if (need && !reach(launch, *need)) {
        c.Add(PlanViolationKind::kLaunchWait,
              "launch of call {} (step {}) does not wait for step {} ({})", t, launch, *need,
              b.name);
      }
    }
    for (BufferId w : p.calls[t].writes) writer[Index(w)] = writer[Index(w)].value_or(t);
  }
}

// Paints the arena in window order; each fill must reach the last reader of every latest
// earlier occupant of its bytes (older occupants are reached through theirs, inductively).
void CheckFillWaits(Ctx& c, const StepSites& s, Reach& reach) {
  const LoadPlan& p = c.plan;
  std::vector<uint32_t> order;
  for (BufferId id : p.arrival) order.push_back(Index(id));
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::pair(p.buffers[a].window_begin, s.fills[a][0]) <
           std::pair(p.buffers[b].window_begin, s.fills[b][0]);
  });
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> arena;  // start -> (end, occupant)
  for (uint32_t i : order) {
    const PlannedBuffer& b = p.buffers[i];
    const uint64_t lo = b.offset, hi = AddSat(b.offset, b.bytes);
    if (lo >= hi) continue;
    auto it = arena.lower_bound(lo);
    if (it != arena.begin() && std::prev(it)->second.first > lo) --it;
    while (it != arena.end() && it->first < hi) {
      const auto [start, seg] = *it;
      const uint32_t need = s.launches[Index(p.buffers[seg.second].last_reader)][0];
      if (!reach(s.fills[i][0], need)) {
        c.Add(PlanViolationKind::kFillWait,
              "fill of {} (step {}) does not wait for the last reader of {} (step {})", b.name,
              s.fills[i][0], c.Name(BufferId{seg.second}), need);
      }
      it = arena.erase(it);
      if (start < lo) arena.emplace(start, std::pair(lo, seg.second));
      if (seg.first > hi) {
        arena.emplace(hi, seg);
        break;
      }
    }
    arena.emplace(lo, std::pair(hi, i));
  }
}

void CheckLaneAndReleaseWaits(Ctx& c, const StepSites& s, Reach& reach) {
  const LoadPlan& p = c.plan;
  std::vector<std::optional<uint32_t>> lane_last(p.lanes);
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    const Step& st = p.steps[i];
    if (st.kind != StepKind::kFill) continue;
    auto& last = lane_last[Index(*st.lane)];
    if (last && !reach(i, *last)) {
      c.Add(PlanViolationKind::kFillWait,
            "fill step {} on lane {} does not wait for step {}, the lane's previous fill", i,
            Index(*st.lane), *last);
    }
    last = i;
  }
  for (BufferId id : p.arrival) {
    const uint32_t need = s.launches[Index(p.buffer(id).last_reader)][0];
    if (!reach(s.releases[Index(id)][0], need)) {
      c.Add(PlanViolationKind::kReleaseWait,
            "release of {} does not wait for its last reader (step {})", c.Name(id), need);
    }
    if (!reach(s.free_arena[0], need)) {
      c.Add(PlanViolationKind::kReleaseWait,
            "freeing the arena does not wait for the last reader of {} (step {})", c.Name(id),
            need);
    }
  }
}

}  // namespace

void CheckSteps(Ctx& c, const StepSites& s) {
  // Each check runs (and reports) even when an earlier one failed: no short circuit.
  const bool resident_once = Once(c, s.alloc_resident, "AllocResident");
  const bool arena_once = Once(c, s.alloc_arena, "AllocArena");
  const bool free_once = Once(c, s.free_arena, "FreeArena");
  bool ok = resident_once && arena_once && free_once;
  for (uint32_t t = 0; t < s.launches.size(); ++t) {
    ok &= Once(c, s.launches[t], "launch of call " + std::to_string(t));
    if (ok && t > 0 && s.launches[t][0] < s.launches[t - 1][0]) {
      c.Add(PlanViolationKind::kSteps, "call {} launches before call {}", t, t - 1);
    }
  }
  if (!ok) return;
  CheckBufferSteps(c, s, s.alloc_resident[0], s.alloc_arena[0], s.free_arena[0]);
}

void CheckWaits(Ctx& c, const StepSites& s) {
  for (const PlanViolation& v : c.out) {
    if (v.kind == PlanViolationKind::kSteps || v.kind == PlanViolationKind::kOverlap ||
        v.kind == PlanViolationKind::kBuffers) {
      return;  // the edges are judged against a complete, non-overlapping step list
    }
  }
  Reach reach(c.plan);
  CheckLaunchWaits(c, s, reach);
  CheckFillWaits(c, s, reach);
  CheckLaneAndReleaseWaits(c, s, reach);
}

}  // namespace loadplan::simulator::checkdetail
