// The planner's layout: source windows, arrival order, lanes, pool and arena offsets.
//
// Time t is the index of a derive call in plan.calls. A source read by calls
// first..last lives in the arena during [max(0, first - prefetch), last + 1):
//
//   t:        0   1   2   3   4
//   src a     [===========)          read by 1, 2 (prefetch 1)
//   src b             [=======)      read by 3    (prefetch 1)
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "base/bytes.h"
#include "simulator/planner/internal.h"

namespace loadplan::simulator::detail {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// First and last derive reader per buffer (kNone when no derive call reads it).
void ReaderSpans(const LoadPlan& plan, std::vector<uint32_t>& first, std::vector<uint32_t>& last) {
  first.assign(plan.buffers.size(), kNone);
  last.assign(plan.buffers.size(), kNone);
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    for (BufferId r : plan.calls[t].reads) {
      if (first[Index(r)] == kNone) first[Index(r)] = t;
      last[Index(r)] = t;
    }
  }
}

// Deals lanes round robin over `order`; a pinned `lane` is kept (modulo the lane count)
// and does not advance the round robin.
void DealLanes(LoadPlan& plan, const std::vector<BufferId>& order) {
  uint32_t next = 0;
  for (BufferId i : order) {
    PlannedBuffer& b = plan.buffers[Index(i)];
    b.lane = Lane{b.lane ? Index(*b.lane) % plan.lanes : next++ % plan.lanes};
  }
}

}  // namespace

std::vector<std::optional<ClockTime>> WeightFillTimes(const LoadPlan& plan) {
  std::vector<std::optional<ClockTime>> at(plan.buffers.size());
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    for (BufferId r : plan.calls[t].reads) {
      if (plan.buffer(r).kind == verifier::BufferKind::kWeight && !at[Index(r)]) {
        at[Index(r)] = ClockTime{t >= plan.prefetch ? t - plan.prefetch : 0};
      }
    }
  }
  return at;
}

void AssignWindowsAndLanes(LoadPlan& plan) {
  std::vector<uint32_t> first, last;
  ReaderSpans(plan, first, last);
  plan.arrival.clear();
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) {
    PlannedBuffer& b = plan.buffers[i];
    if (b.residence != Residence::kStaged) continue;
    if (first[i] == kNone) {
      b.residence = Residence::kSkipped;
      b.lane.reset();
      continue;
    }
    b.first_reader = CallId{first[i]};
    b.last_reader = CallId{last[i]};
    b.window_begin = ClockTime{first[i] >= plan.prefetch ? first[i] - plan.prefetch : 0};
    b.window_end = ClockTime{last[i] + 1};
    plan.arrival.push_back(b.id);
  }
  // Buffer ids are in name order, so (first reader, id) is (first reader, name).
  std::stable_sort(plan.arrival.begin(), plan.arrival.end(), [&](BufferId a, BufferId b) {
    return plan.buffer(a).first_reader < plan.buffer(b).first_reader;
  });
  DealLanes(plan, plan.arrival);
  // Weights: those derive calls read, by fill time then name; then the others by name.
  const std::vector<std::optional<ClockTime>> at = WeightFillTimes(plan);
  std::vector<BufferId> weights;
  for (const PlannedBuffer& b : plan.buffers) {
    if (b.kind == verifier::BufferKind::kWeight) weights.push_back(b.id);
  }
  std::stable_sort(weights.begin(), weights.end(), [&](BufferId a, BufferId b) {
    return (at[Index(a)] ? Index(*at[Index(a)]) : kNone) <
           (at[Index(b)] ? Index(*at[Index(b)]) : kNone);
  });
  DealLanes(plan, weights);
}

void AssignOffsets(LoadPlan& plan, const PlanOptions& options) {
  uint64_t cursor = 0;
  for (PlannedBuffer& b : plan.buffers) {
    b.offset = 0;
    if (b.residence != Residence::kResident) continue;
    b.offset = cursor;
    cursor = base::AddSat(cursor, base::RoundUp(b.bytes, plan.alignment));
  }
  plan.resident_bytes = cursor;
  plan.resident_bytes_rounded = base::RoundUp(cursor, plan.granularity);

  PlacementProblem problem{.buffers = {}, .alignment = plan.alignment};
  problem.buffers.reserve(plan.arrival.size());
  for (size_t rank = 0; rank < plan.arrival.size(); ++rank) {
    const PlannedBuffer& b = plan.buffer(plan.arrival[rank]);
    // Ids sort like the arrival order, so first fit's (lower, id) order is the arrival order.
    problem.buffers.push_back(PlacementBuffer{.id = fmt::format("{:010d}", rank),
                                              .lower = Index(b.window_begin),
                                              .upper = Index(b.window_end),
                                              .size = b.bytes});
  }
  base::Result<Placement> result = Place(problem, PlacementOptions{.policy = options.placement});
  if (!result.ok()) {  // sizes beyond 2^62 (ValidateProblem): saturate, the plan checker rejects it
    plan.arena_bytes = plan.arena_bytes_rounded = plan.lower_bound = UINT64_MAX;
    return;
  }
  const Placement& placed = *result;
  for (size_t rank = 0; rank < plan.arrival.size(); ++rank) {
    plan.buffers[Index(plan.arrival[rank])].offset = placed.offsets[rank];
  }
  plan.arena_bytes = placed.height;
  plan.arena_bytes_rounded = base::RoundUp(placed.height, plan.granularity);
  plan.lower_bound = LowerBound(problem);
}

}  // namespace loadplan::simulator::detail
