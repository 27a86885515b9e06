// Helpers shared by the placement engine's source files (not part of the public API).
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "simulator/placement/placement.h"

namespace loadplan::simulator::placement_internal {

inline uint64_t AlignmentOf(const PlacementProblem& problem) {
  return problem.alignment == 0 ? 1 : problem.alignment;
}

// Sizes round up with base::RoundUp; ValidateProblem ensures no sum of them overflows.
using base::RoundUp;

// A buffer occupies memory when its lifetime is non-empty and its size is positive.
inline bool Occupies(const PlacementBuffer& b) { return b.lower < b.upper && b.size > 0; }

// How the greedy step picks among the free gaps that fit.
enum class GapRule { kLowest, kSmallest };

// Places buffers in the given order (indices into problem.buffers; non-occupying ones may be
// left out), each at a free gap chosen by `rule`. Unlisted buffers get offset 0.
Placement GreedyPlace(const PlacementProblem& problem, std::span<const uint32_t> order,
                      GapRule rule, const PlacementProgress& progress = {},
                      std::string_view stage = "greedy");

// progress(stage, i, total) every kProgressEvery buffers (and at i = 0), when set.
inline constexpr size_t kProgressEvery = 65536;
inline void Report(const PlacementProgress& progress, std::string_view stage, size_t i,
                   size_t total) {
  if (progress && i % kProgressEvery == 0) progress(stage, i, total);
}

// Arrival order: by lower, then id, then input index; only occupying buffers.
std::vector<uint32_t> ArrivalOrder(const PlacementProblem& problem);

}  // namespace loadplan::simulator::placement_internal

namespace loadplan::simulator::placement_internal {

// Outcome of one feasibility search at a fixed capacity.
enum class SearchStatus { kFound, kInfeasible, kAborted };

struct FeasibilityResult {
  SearchStatus status = SearchStatus::kAborted;
  std::vector<uint64_t> offsets;  // for every problem buffer, when status == kFound
  uint64_t nodes = 0;
  uint64_t work = 0;
};

// How one search explores (a portfolio member, see portfolio.cc). The defaults are the single
// search of ExactPlace; every field only changes the order in which the same tree is explored
// or how the budget is spread over capacity probes, never what is accepted.
struct SearchVariant {
  // Static preorders tried round robin (MiniMalloc's keys: W lifetime, A area, T section total).
  std::vector<std::string> preorders = {"WAT", "TAW", "TWA"};
  uint64_t tie_seed = 0;       // buffers with equal keys: 0 by index, else by a hash seeded here
  uint64_t restart_scale = 1;  // the first restart's node limit is scale * max(1000, 2n)
  bool bound_first = true;     // probe the lower bound first with 3/4 of the budget
  uint32_t probe_eighths = 4;  // then probe lo + (hi - lo) * eighths / 8 (4: bisection)
  bool operator==(const SearchVariant&) const = default;
};

// Limits of one feasibility search.
struct SearchLimits {
  uint64_t nodes = 0;                      // stop after this many nodes (across preorder restarts)
  uint64_t work = 0;                       // ... or this many inner-loop steps
  double deadline_s = 0;                   // absolute steady-clock seconds; 0: none
  const SearchVariant* variant = nullptr;  // nullptr: the default variant
  // Set by another thread when this search's result can no longer matter (see portfolio.cc);
  // polled every 1024 nodes. nullptr: never.
  const std::atomic<bool>* stop = nullptr;
};

// Decides whether every buffer fits below `capacity` (MiniMalloc-style branch and bound over
// canonical placements, restarted round robin over several preorders with growing node limits).
FeasibilityResult SolveFeasibility(const PlacementProblem& problem, uint64_t capacity,
                                   const SearchLimits& limits);

double SteadySeconds();

// ExactPlace with an explicit variant (ExactPlace is this with SearchVariant{}).
ExactResult ExactPlaceVariant(const PlacementProblem& problem, const Placement& incumbent,
                              const PlacementOptions& options, const SearchVariant& variant,
                              const std::atomic<bool>* stop = nullptr);

// The fixed portfolio: member i's variant for i < count (member 0 is the single search).
std::vector<SearchVariant> PortfolioVariants(size_t count);

// Static data of one problem for the exact search: occupying buffers only, times compressed
// into sections (the intervals between consecutive distinct endpoints).
using Idx = uint32_t;

struct ExactInstance {
  std::vector<Idx> global;  // local index -> problem index
  std::vector<uint64_t> size;
  std::vector<uint32_t> sec_lo, sec_hi;  // buffer spans sections [sec_lo, sec_hi)
  std::vector<std::vector<Idx>> overlaps;
  std::vector<std::vector<Idx>> members;  // buffers live in each section
  std::vector<int64_t> length;
};

ExactInstance BuildExactInstance(const PlacementProblem& problem);

}  // namespace loadplan::simulator::placement_internal
