// `loadplan place`: read a buffer CSV, place it with a policy, write offsets.
#include "cli/cmd_place.h"

#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/self_check.h"
#include "simulator/placement.h"

namespace loadplan::cli {
namespace {

namespace sim = loadplan::simulator;

sim::CsvReadResult ReadInput(const std::string& path) {
  if (path != "-") return sim::ReadPlacementCsvFile(path);
  const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
  return sim::ReadPlacementCsv(text);
}

bool WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return static_cast<bool>(std::cout.flush());
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

}  // namespace

int RunPlace(const PlaceOptions& options) {
  const std::optional<sim::PlacementPolicy> policy = sim::ParsePlacementPolicy(options.policy);
  if (!policy || options.alignment == 0) {
    fmt::print(std::cerr, "place: {}\n",
               !policy ? fmt::format("unknown policy '{}' (first-fit, best-fit, exact, best)",
                                     options.policy)
                       : std::string("alignment must be positive"));
    return 2;
  }
  sim::CsvReadResult read = ReadInput(options.input);
  for (const sim::CsvError& e : read.errors) {
    fmt::print(std::cerr, "{}:{}: error: {}\n", options.input, e.line, e.message);
  }
  if (!read.problem) return 1;
  read.problem->alignment = options.alignment;
  if (const auto invalid = sim::ValidateProblem(*read.problem)) {
    fmt::print(std::cerr, "{}: error: {}\n", options.input, *invalid);
    return 1;
  }
  sim::PlacementOptions place_options;
  place_options.policy = *policy;
  if (options.node_budget) place_options.node_budget = *options.node_budget;
  if (options.work_budget) place_options.work_budget = *options.work_budget;
  place_options.time_budget_s = options.time_budget_s;
  const sim::Placement placement = sim::Place(*read.problem, place_options);
  if (!PlacementPassesChecker(*read.problem, placement, "loadplan place")) return kInternalError;
  if (!WriteOutput(options.output, sim::WritePlacementCsv(*read.problem, placement))) {
    fmt::print(std::cerr, "place: cannot write '{}'\n", options.output);
    return 1;
  }
  const uint64_t lb = sim::LowerBound(*read.problem);
  fmt::print(std::cerr, "{} buffers, policy {}: height {}, lower bound {} ({:.3f}x)\n",
             read.problem->buffers.size(), sim::PlacementPolicyName(*policy), placement.height, lb,
             lb == 0 ? 1.0 : static_cast<double>(placement.height) / static_cast<double>(lb));
  return 0;
}

}  // namespace loadplan::cli
