// The exact search portfolio: fixed, independent members run in worker threads.
//
// Branch and bound at a fixed capacity is heavy-tailed: which preorder, which tie-break and
// which capacity is probed first decide whether a hard file (MiniMalloc's D, J) is solved in
// 1e7 steps or not in 1e9. So several searches that differ only in exploration order run side by
// side, each with the full per-member budget, and the lowest height wins:
//
//   member:   0        1        2   ...  K-1      (fixed list: PortfolioVariants)
//   thread:   t0       t1       t0  ...           (any assignment: members share nothing)
//   result:   min over members of (height, index)
//
// Members share no incumbent, so each result depends only on the problem, the options and the
// member's index; the winner therefore does not depend on the thread count or the scheduling.
// The one thing shared is a stop signal that keeps this true: when member i proves its height
// optimal, no member j > i can win (it can at best tie, and ties go to the lower index), so
// those are stopped and their results dropped. Members below i run on: one of them may tie.
#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator {
namespace placement_internal {
namespace {

constexpr size_t kMaxPortfolio = 16;

// Member 0 is the single search (bound first: proves the 9 files of MiniMalloc's challenging
// suite whose lower bound is tight); member 1 skips the bound probe and starts from the T
// preorder (reaches the best known of D and J in 1e8 steps); the rest vary one or two knobs each
// (see SearchVariant). Measured in docs/placement.md.
std::vector<SearchVariant> AllVariants() {
  const std::vector<std::string> base = {"WAT", "TAW", "TWA"};
  const std::vector<std::string> total = {"TWA", "WAT", "TAW"};
  const std::vector<std::string> rotated = {"TAW", "TWA", "WAT"};
  const std::vector<std::string> area = {"AWT", "ATW", "WTA"};
  return {
      {},
      {.preorders = total, .bound_first = false},
      {.preorders = base, .bound_first = false},
      {.preorders = rotated, .tie_seed = 1},
      {.preorders = base, .tie_seed = 2, .bound_first = false, .probe_eighths = 6},
      {.preorders = area},
      {.preorders = base, .restart_scale = 16, .bound_first = false},
      {.preorders = rotated, .tie_seed = 3, .bound_first = false, .probe_eighths = 2},
      {.preorders = area, .tie_seed = 4, .bound_first = false},
      {.preorders = total, .tie_seed = 5, .restart_scale = 4, .bound_first = false},
      {.preorders = {"WTA", "AWT"}, .tie_seed = 6, .bound_first = false},
      {.preorders = rotated, .restart_scale = 64, .bound_first = false, .probe_eighths = 6},
      {.preorders = base, .tie_seed = 7, .bound_first = false, .probe_eighths = 2},
      {.preorders = {"TAW"}, .tie_seed = 8, .bound_first = false},
      {.preorders = {"WAT"}, .tie_seed = 9, .bound_first = false},
      {.preorders = area, .tie_seed = 10, .restart_scale = 8, .bound_first = false},
  };
}

}  // namespace

std::vector<SearchVariant> PortfolioVariants(size_t count) {
  std::vector<SearchVariant> all = AllVariants();
  all.resize(std::clamp<size_t>(count, 1, kMaxPortfolio));
  return all;
}

}  // namespace placement_internal

PortfolioResult PortfolioPlace(const PlacementProblem& problem, const Placement& incumbent,
                               const PlacementOptions& options) {
  const std::vector<placement_internal::SearchVariant> variants =
      placement_internal::PortfolioVariants(options.portfolio);
  const size_t k = variants.size();
  std::vector<ExactResult> results(k);
  std::vector<std::atomic<bool>> stop(k);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < k; i = next++) {
      if (stop[i].load()) continue;
      results[i] =
          placement_internal::ExactPlaceVariant(problem, incumbent, options, variants[i], &stop[i]);
      if (!results[i].proven_optimal) continue;
      for (size_t j = i + 1; j < k; ++j) stop[j].store(true);
    }
  };
  const size_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const size_t threads = std::min(options.threads == 0 ? hw : options.threads, variants.size());
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    try {
      workers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads only costs time: the calling thread runs what is left
    }
  }
  work();
  for (std::thread& w : workers) w.join();
  // A member above the first proven one is dropped (height 0), whether or not it was stopped.
  PortfolioResult out;
  size_t proven = k;
  for (size_t i = 0; i < k && proven == k; ++i) {
    if (results[i].proven_optimal) proven = i;
  }
  for (size_t i = 0; i <= std::min(proven, k - 1); ++i) {
    if (results[i].placement.height < results[out.member].placement.height) out.member = i;
  }
  for (size_t i = 0; i < k; ++i) {
    const bool dropped = i > proven;
    out.heights.push_back(dropped ? 0 : results[i].placement.height);
    out.work += dropped ? 0 : results[i].work;
  }
  out.best = results[out.member];
  return out;
}

}  // namespace loadplan::simulator
