// Staging placement engine: offsets for buffers with half-open lifetimes (dynamic storage
// allocation).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace loadplan::simulator {

// One buffer to place. Its lifetime is half-open: live at times t with lower <= t < upper.
// Two buffers conflict when a.lower < b.upper && b.lower < a.upper. A buffer with an empty
// lifetime (lower >= upper) or size 0 occupies no memory: it gets offset 0 and never conflicts.
struct PlacementBuffer {
  std::string id;
  int64_t lower = 0;
  int64_t upper = 0;
  uint64_t size = 0;
  bool operator==(const PlacementBuffer&) const = default;
};

// Every offset is a multiple of `alignment` (0 is read as 1). Sizes are rounded up to it.
struct PlacementProblem {
  std::vector<PlacementBuffer> buffers;
  uint64_t alignment = 1;
  bool operator==(const PlacementProblem&) const = default;
};

// offsets[i] belongs to buffers[i]. height = max over occupying buffers of
// offset + RoundUp(size, alignment) (so a multiple of the alignment), 0 when none occupies memory.
struct Placement {
  std::vector<uint64_t> offsets;
  uint64_t height = 0;
  bool operator==(const Placement&) const = default;
};

enum class PlacementPolicy {
  kFirstFit,  // lowest free offset, buffers in arrival order (lower, then id): the seed's policy
  kBestFit,   // several global orders x {lowest gap, smallest gap}; keeps the lowest height
  kExact,     // best fit, then branch and bound over canonical placements (MiniMalloc ideas)
              // within the budgets, keeping the best fit result when nothing better is found
  kBest,      // as kExact, but the search only runs when n <= exact_max_buffers: the default
};

std::string_view PlacementPolicyName(PlacementPolicy policy);  // "first-fit", "best-fit", ...
std::optional<PlacementPolicy> ParsePlacementPolicy(std::string_view name);

// Options of Place. With the defaults the result depends only on the input: the search stops
// on counted work, never on the clock, and never on the thread count. The default work budget is
// about 0.3-0.9 s per portfolio member on MiniMalloc's challenging files (docs/placement.md).
// Where a placement is: its stage ("first-fit", "greedy by size", "exact search", ...) and the
// buffers placed of the stage's total. Called on the placing thread at each stage's start and
// about every 65536 buffers within one; it must be cheap (store, do not print).
using PlacementProgress = std::function<void(std::string_view stage, size_t placed, size_t total)>;

struct PlacementOptions {
  PlacementPolicy policy = PlacementPolicy::kBest;
  PlacementProgress progress;  // empty: none
  // Limits of one exact search (one portfolio member), over all its capacity probes; it stops at
  // whichever comes first. Work counts inner-loop steps (about 2e8 a second on one core); nodes
  // count search nodes. Each member has its own budgets.
  uint64_t work_budget = 200'000'000;
  uint64_t node_budget = 10'000'000;
  // Optional wall-clock cap on the exact search; nullopt (default) keeps results deterministic.
  std::optional<double> time_budget_s;
  // kBest skips the exact search above this many buffers; kExact runs it up to 20000 (the
  // search recurses once per placed buffer).
  size_t exact_max_buffers = 4000;
  // Members of the exact search portfolio (kExact, kBest): independent searches that differ in
  // preorders, tie-breaks, restart schedule and probe order (portfolio.cc), the lowest height
  // winning, ties to the lowest member. 1 is the single search (ExactPlace); at most 16. Members
  // 0 and 1 reach the best known heights of MiniMalloc's challenging suite; 4 leave a margin.
  size_t portfolio = 4;
  // Worker threads running the members; 0 (default): std::thread::hardware_concurrency(), at
  // most `portfolio`. Changes only the wall time: the result is the same for every value.
  size_t threads = 0;
};

// Places every buffer; deterministic for the same problem and options (without time_budget_s).
// A problem that fails ValidateProblem is that error (kInvalidInput).
base::Result<Placement> Place(const PlacementProblem& problem,
                              const PlacementOptions& options = {});

// max over time of the sum of live sizes, each rounded up to the alignment: no placement is lower.
uint64_t LowerBound(const PlacementProblem& problem);

// Ok when Place can handle the problem: every size, the alignment and the sum of all
// rounded sizes are at most 2^62; otherwise an error naming the buffer.
base::Status ValidateProblem(const PlacementProblem& problem);

// The individual algorithms (Place dispatches to these).
Placement FirstFitPlace(const PlacementProblem& problem, const PlacementProgress& progress = {});
Placement BestFitPlace(const PlacementProblem& problem, const PlacementProgress& progress = {});

// Result of one exact minimisation: the placement and whether its height is proven optimal.
struct ExactResult {
  Placement placement;
  bool proven_optimal = false;
  uint64_t nodes = 0;  // search nodes used
  uint64_t work = 0;   // inner-loop steps used
};
// Exact search below the height of `incumbent` (a valid placement of `problem`).
ExactResult ExactPlace(const PlacementProblem& problem, const Placement& incumbent,
                       const PlacementOptions& options);

// Result of the portfolio: the winner's result and every member's height (index = member).
struct PortfolioResult {
  ExactResult best;
  size_t member = 0;  // the winner: lowest height, then lowest index
  // heights[i]: member i's height; 0 when dropped (above a member that proved its height
  // optimal, so it could not win; it may have been stopped early).
  std::vector<uint64_t> heights;
  uint64_t work = 0;  // inner-loop steps over the members not dropped
};
// Runs options.portfolio exact searches below `incumbent` in options.threads threads. Member 0
// is ExactPlace(problem, incumbent, options), so the result is never higher than it.
PortfolioResult PortfolioPlace(const PlacementProblem& problem, const Placement& incumbent,
                               const PlacementOptions& options);

// Height of the given offsets under the rule of Placement::height.
uint64_t PlacementHeight(const PlacementProblem& problem, const std::vector<uint64_t>& offsets);

// ---- CSV (MiniMalloc's format): header with id,lower,upper,size (any order, extra columns
// ignored), one buffer a line, lifetimes half-open. Output adds an offset column.
struct CsvError {
  int line = 0;  // 1-based line number in the input
  std::string message;
  bool operator==(const CsvError&) const = default;
};
struct CsvReadResult {
  std::optional<PlacementProblem> problem;  // set when errors is empty
  std::vector<CsvError> errors;
};
CsvReadResult ReadPlacementCsv(std::string_view text);
CsvReadResult ReadPlacementCsvFile(const std::string& path);
std::string WritePlacementCsv(const PlacementProblem& problem, const Placement& placement);

}  // namespace loadplan::simulator
