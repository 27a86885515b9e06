// `loadplan place`: read a buffer CSV, place it with a policy, write offsets.
#include "cli/cmd_place.h"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <stop_token>
#include <thread>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "cli/pipeline.h"
#include "cli/self_check.h"
#include "simulator/placement/placement.h"

namespace loadplan::cli {
namespace {

namespace sim = loadplan::simulator;

sim::CsvReadResult ReadInput(const std::string& path) {
  if (path != "-") return sim::ReadPlacementCsvFile(path);
  const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
  return sim::ReadPlacementCsv(text);
}

}  // namespace

// A usage problem of the options, or empty.
std::string OptionProblem(const PlaceOptions& o, std::optional<sim::PlacementPolicy> policy) {
  if (!policy)
    return fmt::format("unknown policy '{}' (first-fit, best-fit, exact, best)", o.policy);
  if (o.alignment == 0) return "alignment must be positive";
  const bool searches =
      *policy == sim::PlacementPolicy::kExact || *policy == sim::PlacementPolicy::kBest;
  if (!searches && (o.work_budget || o.node_budget || o.time_budget_s)) {
    return fmt::format(
        "--work-budget, --node-budget and --time-budget apply to the exact and best policies, not "
        "{}",
        o.policy);
  }
  return {};
}

// Progress on stderr once a placement has run a second, then each second: the stage and the
// buffers placed of its total ("place: greedy, smallest gap: 393216 of 1000000 buffers, 3 s").
// The placing thread only stores; this thread prints, and stops with the placement.
class Ticker {
 public:
  Ticker() : thread_([this](std::stop_token stop) { Run(stop); }) {}
  sim::PlacementProgress Callback() {
    return [this](std::string_view stage, size_t placed, size_t total) {
      const std::lock_guard lock(mu_);
      stage_ = stage;
      placed_ = placed;
      total_ = total;
    };
  }
  ~Ticker() {
    thread_.request_stop();
    cv_.notify_all();
    thread_.join();
    if (printed_) fmt::print(std::cerr, "\n");
  }

 private:
  void Run(std::stop_token stop) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    for (int s = 1; !stop.stop_requested(); ++s) {
      if (cv_.wait_until(lock, stop, start + std::chrono::seconds(s), [] { return false; })) break;
      if (stop.stop_requested()) break;
      fmt::print(std::cerr, "\rplace: {}: {} of {} buffers, {} s", stage_, placed_, total_, s);
      printed_ = true;
    }
  }
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::string stage_ = "starting";
  size_t placed_ = 0, total_ = 0;
  bool printed_ = false;
  std::jthread thread_;  // last: started after the fields it reads
};

int RunPlace(const PlaceOptions& options) {
  const std::optional<sim::PlacementPolicy> policy = sim::ParsePlacementPolicy(options.policy);
  if (const std::string problem = OptionProblem(options, policy); !problem.empty()) {
    fmt::print(std::cerr, "place: {}\n", problem);
    return 2;
  }
  sim::CsvReadResult read = ReadInput(options.input);
  if (!read.errors.empty() && read.errors.front().line == 0) {  // unreadable: no line to name
    fmt::print(std::cerr, "place: {}\n", read.errors.front().message);
    return 2;
  }
  for (const sim::CsvError& e : read.errors) {
    fmt::print(std::cerr, "{}:{}: error: {}\n", options.input, e.line, e.message);
  }
  if (!read.problem) return 1;
  read.problem->alignment = options.alignment;
  if (const base::Status valid = sim::ValidateProblem(*read.problem); !valid.ok()) {
    fmt::print(std::cerr, "{}: error: {}\n", options.input, valid.message());
    return 1;
  }
  sim::PlacementOptions place_options;
  place_options.policy = *policy;
  if (options.node_budget) place_options.node_budget = *options.node_budget;
  if (options.work_budget) place_options.work_budget = *options.work_budget;
  place_options.time_budget_s = options.time_budget_s;
  base::Result<sim::Placement> placed = [&] {
    Ticker ticker;
    place_options.progress = ticker.Callback();
    return sim::Place(*read.problem, place_options);
  }();
  if (!placed.ok()) {  // ValidateProblem passed above, so this is not the input's fault
    fmt::print(std::cerr, "{}: internal error: {}\n", options.input, placed.status().message());
    return kInternalError;
  }
  const sim::Placement& placement = *placed;
  if (!PlacementPassesChecker(*read.problem, placement, "loadplan place")) return kInternalError;
  const std::string output = options.output.empty() ? "-" : options.output;  // "": stdout
  if (!WriteOutput(output, sim::WritePlacementCsv(*read.problem, placement)).ok()) {
    fmt::print(std::cerr, "place: cannot write {}\n",
               output == "-" ? std::string("to stdout") : output);
    return 2;
  }
  if (output != "-") fmt::print(std::cerr, "wrote {}: an offset per buffer\n", output);
  const uint64_t lb = sim::LowerBound(*read.problem);
  fmt::print(std::cerr, "{} buffers, policy {}: height {}, lower bound {} ({:.3f}x)\n",
             read.problem->buffers.size(), sim::PlacementPolicyName(*policy), placement.height, lb,
             lb == 0 ? 1.0 : static_cast<double>(placement.height) / static_cast<double>(lb));
  return 0;
}

}  // namespace loadplan::cli
