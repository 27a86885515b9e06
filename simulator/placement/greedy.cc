// Greedy placement: first fit in arrival order and best fit over several global orders.
#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <utility>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator {
namespace placement_internal {
namespace {

// Index of placed buffers by lifetime: reports the placed buffers whose lifetimes overlap a
// query lifetime. Overlapping = live at the query's lower (stabbing, through a segment tree of
// canonical time ranges: O(log n + k)) or starting strictly inside the query's lifetime (a scan
// of all buffers by lower, placed or not: O(buffers starting inside)).
class PlacedIndex {
 public:
  explicit PlacedIndex(const PlacementProblem& problem)
      : problem_(problem), placed_(problem.buffers.size(), 0) {
    for (uint32_t i = 0; i < problem.buffers.size(); ++i) {
      const PlacementBuffer& b = problem.buffers[i];
      if (!Occupies(b)) continue;
      times_.push_back(b.lower);
      times_.push_back(b.upper);
      by_lower_.push_back({b.lower, i});
    }
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    std::sort(by_lower_.begin(), by_lower_.end());
    leaves_ = std::max<size_t>(1, times_.size());
    nodes_.resize(2 * leaves_);
  }

  void Insert(uint32_t idx) {
    const PlacementBuffer& b = problem_.buffers[idx];
    size_t lo = TimeIndex(b.lower) + leaves_;
    size_t hi = TimeIndex(b.upper) + leaves_;
    for (; lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) nodes_[lo++].push_back(idx);
      if (hi & 1) nodes_[--hi].push_back(idx);
    }
    placed_[idx] = 1;
  }

  // Appends the placed buffers overlapping buffer `idx`'s lifetime to `out`.
  void Overlapping(uint32_t idx, std::vector<uint32_t>& out) const {
    const PlacementBuffer& b = problem_.buffers[idx];
    for (size_t node = TimeIndex(b.lower) + leaves_; node >= 1; node >>= 1) {
      out.insert(out.end(), nodes_[node].begin(), nodes_[node].end());
    }
    auto it = std::upper_bound(by_lower_.begin(), by_lower_.end(),
                               std::pair<int64_t, uint32_t>{b.lower, UINT32_MAX});
    for (; it != by_lower_.end() && it->first < b.upper; ++it) {
      if (placed_[it->second]) out.push_back(it->second);
    }
  }

 private:
  size_t TimeIndex(int64_t t) const {
    return static_cast<size_t>(std::lower_bound(times_.begin(), times_.end(), t) - times_.begin());
  }

  const PlacementProblem& problem_;
  std::vector<int64_t> times_;
  size_t leaves_ = 1;
  std::vector<std::vector<uint32_t>> nodes_;
  std::vector<std::pair<int64_t, uint32_t>> by_lower_;
  std::vector<char> placed_;
};

struct Chunk {
  uint64_t offset;
  uint64_t top;
};

// Chooses an offset among the gaps left by `chunks` (sorted by offset) for `size` bytes.
uint64_t ChooseGap(const std::vector<Chunk>& chunks, uint64_t size, GapRule rule) {
  uint64_t cur = 0;
  std::optional<std::pair<uint64_t, uint64_t>> best;  // (gap length, offset)
  for (const Chunk& c : chunks) {
    if (c.offset >= cur && c.offset - cur >= size) {
      if (rule == GapRule::kLowest) return cur;
      const std::pair<uint64_t, uint64_t> gap{c.offset - cur, cur};
      if (!best || gap < *best) best = gap;
    }
    cur = std::max(cur, c.top);
  }
  return best ? best->second : cur;
}

}  // namespace

Placement GreedyPlace(const PlacementProblem& problem, std::span<const uint32_t> order,
                      GapRule rule, const PlacementProgress& progress, std::string_view stage) {
  const uint64_t align = AlignmentOf(problem);
  Placement result{.offsets = std::vector<uint64_t>(problem.buffers.size(), 0), .height = 0};
  PlacedIndex index(problem);
  std::vector<uint32_t> overlap;
  std::vector<Chunk> chunks;
  size_t placed = 0;
  for (const uint32_t idx : order) {
    Report(progress, stage, placed++, order.size());
    const PlacementBuffer& b = problem.buffers[idx];
    if (!Occupies(b)) continue;
    overlap.clear();
    index.Overlapping(idx, overlap);
    chunks.clear();
    for (const uint32_t o : overlap) {
      const uint64_t off = result.offsets[o];
      chunks.push_back({off, off + RoundUp(problem.buffers[o].size, align)});
    }
    std::sort(chunks.begin(), chunks.end(),
              [](const Chunk& x, const Chunk& y) { return x.offset < y.offset; });
    const uint64_t size = RoundUp(b.size, align);
    result.offsets[idx] = ChooseGap(chunks, size, rule);
    result.height = std::max(result.height, result.offsets[idx] + size);
    index.Insert(idx);
  }
  return result;
}

std::vector<uint32_t> ArrivalOrder(const PlacementProblem& problem) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < problem.buffers.size(); ++i) {
    if (Occupies(problem.buffers[i])) order.push_back(i);
  }
  const auto& bs = problem.buffers;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (bs[a].lower != bs[b].lower) return bs[a].lower < bs[b].lower;
    if (bs[a].id != bs[b].id) return bs[a].id < bs[b].id;
    return a < b;
  });
  return order;
}

}  // namespace placement_internal

// First fit in arrival order as a sweep: every earlier arrival still live at b.lower overlaps
// b, so the gaps are those of the live set, kept ordered by offset (O(n log n + n * live)).
Placement FirstFitPlace(const PlacementProblem& problem, const PlacementProgress& progress) {
  using namespace placement_internal;
  const uint64_t align = AlignmentOf(problem);
  Placement result{.offsets = std::vector<uint64_t>(problem.buffers.size(), 0), .height = 0};
  std::set<std::pair<uint64_t, uint32_t>> live;  // (offset, index)
  std::priority_queue<std::pair<int64_t, uint32_t>, std::vector<std::pair<int64_t, uint32_t>>,
                      std::greater<>>
      ends;  // (upper, index)
  const std::vector<uint32_t> order = ArrivalOrder(problem);
  size_t placed = 0;
  for (const uint32_t idx : order) {
    Report(progress, "first-fit", placed++, order.size());
    const PlacementBuffer& b = problem.buffers[idx];
    for (; !ends.empty() && ends.top().first <= b.lower; ends.pop()) {
      live.erase({result.offsets[ends.top().second], ends.top().second});
    }
    const uint64_t size = RoundUp(b.size, align);
    uint64_t cur = 0;
    for (const auto& [offset, other] : live) {
      if (offset >= cur && offset - cur >= size) break;
      cur = std::max(cur, offset + RoundUp(problem.buffers[other].size, align));
    }
    result.offsets[idx] = cur;
    result.height = std::max(result.height, cur + size);
    live.insert({cur, idx});
    ends.push({b.upper, idx});
  }
  return result;
}

}  // namespace loadplan::simulator
