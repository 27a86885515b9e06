// Best fit over several global orders (by size, duration, area, section load, arrival).
#include <algorithm>
#include <functional>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator {
namespace placement_internal {
namespace {

// Per-buffer sort keys; `total` is the largest live load (sum of rounded sizes) over the
// buffer's lifetime, MiniMalloc's "T" key.
struct Keys {
  uint64_t size = 0;
  uint64_t duration = 0;
  unsigned __int128 area = 0;
  uint64_t total = 0;
};

// Max of the live-load profile over each buffer's lifetime (iterative segment tree).
std::vector<uint64_t> SectionTotals(const PlacementProblem& problem,
                                    const std::vector<uint32_t>& occupying) {
  const uint64_t align = AlignmentOf(problem);
  std::vector<int64_t> times;
  for (const uint32_t i : occupying) {
    times.push_back(problem.buffers[i].lower);
    times.push_back(problem.buffers[i].upper);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto index = [&](int64_t t) {
    return static_cast<size_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  const size_t m = std::max<size_t>(1, times.size());
  std::vector<uint64_t> delta_in(m + 1, 0), delta_out(m + 1, 0);
  for (const uint32_t i : occupying) {
    const uint64_t size = RoundUp(problem.buffers[i].size, align);
    delta_in[index(problem.buffers[i].lower)] += size;
    delta_out[index(problem.buffers[i].upper)] += size;
  }
  std::vector<uint64_t> tree(2 * m, 0);
  uint64_t live = 0;
  for (size_t s = 0; s < m; ++s) {
    live = live + delta_in[s] - delta_out[s];
    tree[m + s] = live;
  }
  for (size_t n = m - 1; n >= 1; --n) tree[n] = std::max(tree[2 * n], tree[2 * n + 1]);
  std::vector<uint64_t> totals(problem.buffers.size(), 0);
  for (const uint32_t i : occupying) {
    uint64_t best = 0;
    for (size_t lo = index(problem.buffers[i].lower) + m, hi = index(problem.buffers[i].upper) + m;
         lo < hi; lo >>= 1, hi >>= 1) {
      if (lo & 1) best = std::max(best, tree[lo++]);
      if (hi & 1) best = std::max(best, tree[--hi]);
    }
    totals[i] = best;
  }
  return totals;
}

std::vector<Keys> ComputeKeys(const PlacementProblem& problem,
                              const std::vector<uint32_t>& occupying) {
  const uint64_t align = AlignmentOf(problem);
  const std::vector<uint64_t> totals = SectionTotals(problem, occupying);
  std::vector<Keys> keys(problem.buffers.size());
  for (const uint32_t i : occupying) {
    const PlacementBuffer& b = problem.buffers[i];
    Keys& k = keys[i];
    k.size = RoundUp(b.size, align);
    k.duration = static_cast<uint64_t>(b.upper) - static_cast<uint64_t>(b.lower);
    k.area = static_cast<unsigned __int128>(k.size) * k.duration;
    k.total = totals[i];
  }
  return keys;
}

// Above this many buffers best fit runs only first fit and size order with the smallest gap.
constexpr size_t kLargeProblem = 20000;

using KeyLess = std::function<bool(const Keys&, const Keys&)>;

// Orders `occupying` by `greater` descending keys, ties by lower then input index.
std::vector<uint32_t> SortedBy(const PlacementProblem& problem, std::vector<uint32_t> order,
                               const std::vector<Keys>& keys, const KeyLess& greater) {
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (greater(keys[a], keys[b])) return true;
    if (greater(keys[b], keys[a])) return false;
    return problem.buffers[a].lower < problem.buffers[b].lower;
  });
  return order;
}

std::vector<KeyLess> GlobalOrders() {
  return {
      [](const Keys& a, const Keys& b) {
        return std::pair(a.size, a.duration) > std::pair(b.size, b.duration);
      },
      [](const Keys& a, const Keys& b) {
        return std::pair(a.duration, a.size) > std::pair(b.duration, b.size);
      },
      [](const Keys& a, const Keys& b) { return a.area > b.area; },
      [](const Keys& a, const Keys& b) {
        return std::pair(a.total, a.size) > std::pair(b.total, b.size);
      },
      [](const Keys& a, const Keys& b) {
        return std::pair(a.total, a.area) > std::pair(b.total, b.area);
      },
  };
}

}  // namespace
}  // namespace placement_internal

Placement BestFitPlace(const PlacementProblem& problem, const PlacementProgress& progress) {
  using namespace placement_internal;
  std::vector<uint32_t> occupying = ArrivalOrder(problem);
  std::sort(occupying.begin(), occupying.end());
  const std::vector<Keys> keys = ComputeKeys(problem, occupying);
  std::vector<KeyLess> orders = GlobalOrders();
  const bool large = occupying.size() > kLargeProblem;
  if (large) orders.resize(1);  // size order only: each greedy run costs O(sum of overlaps)
  Placement best = FirstFitPlace(problem, progress);
  std::vector<std::vector<uint32_t>> sorted;
  for (const KeyLess& greater : orders)
    sorted.push_back(SortedBy(problem, occupying, keys, greater));
  if (!large) sorted.push_back(ArrivalOrder(problem));  // with the smallest gap
  for (const std::vector<uint32_t>& order : sorted) {
    for (const GapRule rule : {GapRule::kSmallest, GapRule::kLowest}) {
      if ((large || &order == &sorted.back()) && rule == GapRule::kLowest) continue;
      Placement p =
          GreedyPlace(problem, order, rule, progress,
                      rule == GapRule::kSmallest ? "greedy, smallest gap" : "greedy, lowest gap");
      if (p.height < best.height) best = std::move(p);
    }
  }
  return best;
}

}  // namespace loadplan::simulator
