// Place(): dispatches to the policies; the exact policy minimises the height by capacity probes.
#include <algorithm>
#include <limits>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator {
namespace {

using placement_internal::AlignmentOf;
using placement_internal::Occupies;
using placement_internal::SearchStatus;

// The search recurses once per placed buffer; beyond this it is never run (stack depth).
constexpr size_t kExactHardLimit = 20000;

size_t OccupyingCount(const PlacementProblem& problem) {
  return static_cast<size_t>(std::count_if(problem.buffers.begin(), problem.buffers.end(),
                                           [](const PlacementBuffer& b) { return Occupies(b); }));
}

}  // namespace

ExactResult ExactPlace(const PlacementProblem& problem, const Placement& incumbent,
                       const PlacementOptions& options) {
  return placement_internal::ExactPlaceVariant(problem, incumbent, options, {});
}

namespace placement_internal {

ExactResult ExactPlaceVariant(const PlacementProblem& problem, const Placement& incumbent,
                              const PlacementOptions& options, const SearchVariant& variant,
                              const std::atomic<bool>* stop) {
  const uint64_t align = AlignmentOf(problem);
  const uint64_t lower_bound = LowerBound(problem);
  ExactResult result{.placement = incumbent, .proven_optimal = false, .nodes = 0, .work = 0};
  uint64_t lo = lower_bound;       // every capacity below lo is infeasible
  uint64_t hi = incumbent.height;  // hi is feasible
  bool lo_proven = true;
  uint64_t nodes_left = options.node_budget;
  uint64_t work_left = options.work_budget;
  const double deadline =
      options.time_budget_s ? placement_internal::SteadySeconds() + *options.time_budget_s : 0;
  while (lo < hi && nodes_left > 0 && work_left > 0) {
    // Probe the lower bound first (tight on most inputs; it may use 3/4 of the budget), then
    // bisect in units of the alignment (each probe may use half of what is left); a variant may
    // skip the bound probe and split the interval elsewhere than at its middle.
    const bool at_bound = variant.bound_first && lo == lower_bound;
    const uint64_t steps = (hi - lo) / align;
    const uint64_t e = std::min<uint64_t>(variant.probe_eighths, 7);  // 8 would probe hi again
    const uint64_t capacity = at_bound ? lo : lo + (steps / 8 * e + steps % 8 * e / 8) * align;
    auto share = [&](uint64_t v) { return v <= 1000 ? v : (at_bound ? v - v / 4 : v / 2); };
    const placement_internal::FeasibilityResult probe =
        placement_internal::SolveFeasibility(problem, capacity,
                                             {.nodes = share(nodes_left),
                                              .work = share(work_left),
                                              .deadline_s = deadline,
                                              .variant = &variant,
                                              .stop = stop});
    nodes_left -= std::min(nodes_left, probe.nodes);
    work_left -= std::min(work_left, probe.work);
    result.nodes += probe.nodes;
    result.work += probe.work;
    if (probe.status == SearchStatus::kFound) {
      result.placement.offsets = probe.offsets;
      result.placement.height = PlacementHeight(problem, probe.offsets);
      hi = result.placement.height;
    } else {
      lo_proven = lo_proven && probe.status == SearchStatus::kInfeasible;
      lo = capacity + align;
    }
    if (deadline > 0 && placement_internal::SteadySeconds() > deadline) break;
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
  }
  result.proven_optimal = hi <= lower_bound || (lo >= hi && lo_proven);
  return result;
}

}  // namespace placement_internal

base::Result<Placement> Place(const PlacementProblem& problem, const PlacementOptions& options) {
  if (base::Status valid = ValidateProblem(problem); !valid.ok()) return valid;
  switch (options.policy) {
    case PlacementPolicy::kFirstFit: return FirstFitPlace(problem, options.progress);
    case PlacementPolicy::kBestFit: return BestFitPlace(problem, options.progress);
    case PlacementPolicy::kExact:
    case PlacementPolicy::kBest: {
      Placement heuristic = BestFitPlace(problem, options.progress);
      const size_t n = OccupyingCount(problem);
      const size_t limit = options.policy == PlacementPolicy::kExact
                               ? kExactHardLimit
                               : std::min(kExactHardLimit, options.exact_max_buffers);
      if (n > limit || heuristic.height <= LowerBound(problem)) return heuristic;
      if (options.progress) options.progress("exact search", 0, n);
      return PortfolioPlace(problem, heuristic, options).best.placement;
    }
  }
  return FirstFitPlace(problem);
}

}  // namespace loadplan::simulator
