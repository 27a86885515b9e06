// The planner's steps and wait edges.
//
//   AllocResident, AllocArena,
//   for t in clock: Fill(sources with window_begin == t, arrival order; their lane)
//                   Fill(weights first read at t + prefetch, name order)
//                   Launch(t)
//                   Release(sources whose last reader is t)
//   FreeArena, Fill(weights no derive call reads, name order)
//
// Wait edges (indices of earlier steps):
//   Fill(x)    -> the previous fill on x's lane;
//   Fill(src)  -> Launch(last reader) of the latest earlier occupant of every byte of
//                 [offset, offset + bytes): found by "painting" an interval map of the arena
//                 with each source in arrival order (older occupants are reached through
//                 the latest one's own edges, so the edge count stays O(n));
//   Launch(t)  -> Fill of every source and weight t reads, Launch of the writer of every
//                 carry t reads;
//   Release(s) -> Launch(last reader of s);  FreeArena -> every last reader's Launch.
#include <algorithm>
#include <map>

#include "base/bytes.h"
#include "simulator/planner/internal.h"

namespace loadplan::simulator::detail {
namespace {

struct Segment {
  uint64_t end = 0;
  BufferId who{};  // the latest occupant
};
using ByteMap = std::map<uint64_t, Segment>;

// Paints [b, e) with `who`; returns the previous occupants of any byte in it.
std::vector<BufferId> Paint(ByteMap& m, uint64_t b, uint64_t e, BufferId who) {
  std::vector<BufferId> hit;
  if (b >= e) return hit;
  auto it = m.lower_bound(b);
  if (it != m.begin() && std::prev(it)->second.end > b) --it;
  while (it != m.end() && it->first < e) {
    const uint64_t start = it->first;
    const Segment seg = it->second;
    hit.push_back(seg.who);
    it = m.erase(it);
    if (start < b) m.emplace(start, Segment{b, seg.who});
    if (seg.end > e) {
      m.emplace(e, Segment{seg.end, seg.who});
      break;
    }
  }
  m.emplace(b, Segment{e, who});
  return hit;
}

void SortUnique(std::vector<StepIndex>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

class StepBuilder {
 public:
  explicit StepBuilder(const LoadPlan& plan)
      : plan_(plan),
        fill_(plan.buffers.size()),
        writer_(plan.buffers.size()),
        lane_last_(plan.lanes),
        launch_(plan.calls.size()) {}

  std::vector<Step> Build();

 private:
  StepIndex Push(Step s) {
    SortUnique(s.waits);
    steps_.push_back(std::move(s));
    return StepIndex{static_cast<uint32_t>(steps_.size() - 1)};
  }
  void Fill(BufferId buffer);
  void Launch(CallId t);

  const LoadPlan& plan_;
  std::vector<Step> steps_;
  std::vector<std::optional<StepIndex>> fill_, writer_, lane_last_;  // by buffer, buffer, lane
  std::vector<StepIndex> launch_;                                    // by call
  ByteMap arena_;
};

void StepBuilder::Fill(BufferId i) {
  const PlannedBuffer& b = plan_.buffer(i);
  const Lane lane{b.lane ? Index(*b.lane) % plan_.lanes : 0};
  Step s{.kind = StepKind::kFill, .buffer = i, .call = {}, .lane = lane, .waits = {}};
  if (lane_last_[Index(lane)]) s.waits.push_back(*lane_last_[Index(lane)]);
  if (b.residence == Residence::kStaged) {
    const uint64_t end = base::AddSat(b.offset, b.bytes);
    for (BufferId prev : Paint(arena_, b.offset, end, i)) {
      s.waits.push_back(launch_[Index(plan_.buffer(prev).last_reader)]);
    }
  }
  fill_[Index(i)] = lane_last_[Index(lane)] = Push(std::move(s));
}

void StepBuilder::Launch(CallId t) {
  const PlannedCall& c = plan_.call(t);
  Step s{.kind = StepKind::kLaunch, .buffer = {}, .call = t, .lane = {}, .waits = {}};
  for (BufferId r : c.reads) {
    if (fill_[Index(r)]) s.waits.push_back(*fill_[Index(r)]);
    if (writer_[Index(r)]) s.waits.push_back(*writer_[Index(r)]);
  }
  launch_[Index(t)] = Push(std::move(s));
  for (BufferId w : c.writes) writer_[Index(w)] = launch_[Index(t)];
}

std::vector<Step> StepBuilder::Build() {
  const size_t n = plan_.calls.size();
  std::vector<std::vector<BufferId>> arrive(n), weights(n), release(n);
  for (BufferId i : plan_.arrival) {
    arrive[Index(plan_.buffer(i).window_begin)].push_back(i);
    release[Index(plan_.buffer(i).last_reader)].push_back(i);
  }
  const std::vector<std::optional<ClockTime>> weight_at = WeightFillTimes(plan_);
  std::vector<BufferId> late;
  for (const PlannedBuffer& b : plan_.buffers) {
    if (b.kind != verifier::BufferKind::kWeight) continue;
    if (weight_at[Index(b.id)])
      weights[Index(*weight_at[Index(b.id)])].push_back(b.id);
    else
      late.push_back(b.id);
  }
  Push(Step{.kind = StepKind::kAllocResident});
  Push(Step{.kind = StepKind::kAllocArena});
  std::vector<StepIndex> last_launches;
  for (uint32_t t = 0; t < n; ++t) {
    for (BufferId i : arrive[t]) Fill(i);
    for (BufferId i : weights[t]) Fill(i);
    Launch(CallId{t});
    for (BufferId i : release[t]) {
      Push(Step{.kind = StepKind::kRelease, .buffer = i, .waits = {launch_[t]}});
    }
    if (!release[t].empty()) last_launches.push_back(launch_[t]);
  }
  Push(Step{.kind = StepKind::kFreeArena, .waits = last_launches});
  for (BufferId i : late) Fill(i);
  return std::move(steps_);
}

}  // namespace

std::vector<Step> BuildSteps(const LoadPlan& plan) { return StepBuilder(plan).Build(); }

}  // namespace loadplan::simulator::detail
