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

#include "simulator/plan_internal.h"

namespace loadplan::simulator::detail {
namespace {

struct Segment {
  uint64_t end = 0;
  uint32_t who = 0;  // buffer index of the latest occupant
};
using ByteMap = std::map<uint64_t, Segment>;

// Paints [b, e) with `who`; returns the previous occupants of any byte in it.
std::vector<uint32_t> Paint(ByteMap& m, uint64_t b, uint64_t e, uint32_t who) {
  std::vector<uint32_t> hit;
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

void SortUnique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

class StepBuilder {
 public:
  explicit StepBuilder(const LoadPlan& plan)
      : plan_(plan), fill_(plan.buffers.size()), writer_(plan.buffers.size()),
        lane_last_(plan.lanes), launch_(plan.calls.size()) {}

  std::vector<Step> Build();

 private:
  uint32_t Push(Step s) {
    SortUnique(s.waits);
    steps_.push_back(std::move(s));
    return static_cast<uint32_t>(steps_.size() - 1);
  }
  void Fill(uint32_t buffer);
  void Launch(uint32_t t);

  const LoadPlan& plan_;
  std::vector<Step> steps_;
  std::vector<std::optional<uint32_t>> fill_, writer_, lane_last_;
  std::vector<uint32_t> launch_;
  ByteMap arena_;
};

void StepBuilder::Fill(uint32_t i) {
  const PlannedBuffer& b = plan_.buffers[i];
  const uint32_t lane = b.lane.value_or(0) % plan_.lanes;
  Step s{.kind = StepKind::kFill, .buffer = i, .call = {}, .lane = lane, .waits = {}};
  if (lane_last_[lane]) s.waits.push_back(*lane_last_[lane]);
  if (b.residence == Residence::kStaged) {
    const uint64_t end = AddSat(b.offset, b.bytes);
    for (uint32_t prev : Paint(arena_, b.offset, end, i)) {
      s.waits.push_back(launch_[plan_.buffers[prev].last_reader]);
    }
  }
  fill_[i] = lane_last_[lane] = Push(std::move(s));
}

void StepBuilder::Launch(uint32_t t) {
  const PlannedCall& c = plan_.calls[t];
  Step s{.kind = StepKind::kLaunch, .buffer = {}, .call = t, .lane = {}, .waits = {}};
  for (uint32_t r : c.reads) {
    if (fill_[r]) s.waits.push_back(*fill_[r]);
    if (writer_[r]) s.waits.push_back(*writer_[r]);
  }
  launch_[t] = Push(std::move(s));
  for (uint32_t w : c.writes) writer_[w] = launch_[t];
}

std::vector<Step> StepBuilder::Build() {
  const size_t n = plan_.calls.size();
  std::vector<std::vector<uint32_t>> arrive(n), weights(n), release(n);
  for (uint32_t i : plan_.arrival) {
    arrive[plan_.buffers[i].window_begin].push_back(i);
    release[plan_.buffers[i].last_reader].push_back(i);
  }
  const std::vector<std::optional<uint32_t>> weight_at = WeightFillTimes(plan_);
  std::vector<uint32_t> late;
  for (uint32_t i = 0; i < plan_.buffers.size(); ++i) {
    if (plan_.buffers[i].kind != verifier::BufferKind::kWeight) continue;
    if (weight_at[i]) weights[*weight_at[i]].push_back(i);
    else late.push_back(i);
  }
  Push(Step{.kind = StepKind::kAllocResident});
  Push(Step{.kind = StepKind::kAllocArena});
  std::vector<uint32_t> last_launches;
  for (uint32_t t = 0; t < n; ++t) {
    for (uint32_t i : arrive[t]) Fill(i);
    for (uint32_t i : weights[t]) Fill(i);
    Launch(t);
    for (uint32_t i : release[t]) {
      Push(Step{.kind = StepKind::kRelease, .buffer = i, .waits = {launch_[t]}});
    }
    if (!release[t].empty()) last_launches.push_back(launch_[t]);
  }
  Push(Step{.kind = StepKind::kFreeArena, .waits = last_launches});
  for (uint32_t i : late) Fill(i);
  return std::move(steps_);
}

}  // namespace

std::vector<Step> BuildSteps(const LoadPlan& plan) { return StepBuilder(plan).Build(); }

}  // namespace loadplan::simulator::detail
