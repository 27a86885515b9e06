// `loadplan place`: offsets for a MiniMalloc-style CSV of buffers (id,lower,upper,size).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loadplan::cli {

struct PlaceOptions {
  std::string input;                    // CSV path; "-" reads stdin
  std::string policy = "best";          // first-fit | best-fit | exact | best
  uint64_t alignment = 1;               // offsets are multiples of this
  std::string output;                   // CSV path for the result; "" or "-" writes stdout
  std::optional<uint64_t> work_budget;  // exact search steps (default: PlacementOptions's)
  std::optional<uint64_t> node_budget;  // exact search nodes (default: PlacementOptions's)
  std::optional<double> time_budget_s;  // wall-clock cap on the exact search (non-deterministic)
};

// Reads the CSV, places, writes the CSV with an offset column and prints a
// summary (height, lower bound, ratio) to stderr. Returns 0 on success, 1 on bad CSV content,
// 2 on bad options (budgets with a policy that does not search are refused) or an input that
// cannot be read or an output that cannot be written.
int RunPlace(const PlaceOptions& options);

}  // namespace loadplan::cli
