// libFuzzer target: MiniMalloc-format placement CSV (`loadplan place`). The reader either
// reports errors with line numbers or gives a problem; a valid problem is placed by every
// policy (the exact search with a small budget) and each placement must pass the independent
// placement checker, sit at or above the lower bound, and survive a write -> read round trip.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/check/placement_check.h"
#include "simulator/placement/placement.h"

namespace {

namespace sim = loadplan::simulator;

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_placement: %s\n", why.c_str());
  std::abort();
}

void CheckPlaced(const sim::PlacementProblem& p, const sim::Placement& placed, const char* policy) {
  if (placed.offsets.size() != p.buffers.size())
    Fail(std::string(policy) + ": one offset per buffer expected");
  const auto violations = sim::CheckPlacement(p, placed);
  if (!violations.empty()) Fail(std::string(policy) + ": " + violations.front().message);
  if (placed.height < sim::LowerBound(p))
    Fail(std::string(policy) + ": height below the lower bound");
  const sim::CsvReadResult again = sim::ReadPlacementCsv(sim::WritePlacementCsv(p, placed));
  if (!again.problem || again.problem->buffers != p.buffers)
    Fail(std::string(policy) + ": CSV round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const sim::CsvReadResult read = sim::ReadPlacementCsv(text);
  if (!read.problem) {
    if (read.errors.empty()) Fail("no problem and no error");
    return 0;
  }
  if (!read.errors.empty()) Fail("a problem despite errors");
  sim::PlacementProblem p = *read.problem;
  p.alignment = 1 + (size % 7 == 0 ? 255 : 0);  // alignment 1, or 256 for some inputs
  if (!sim::ValidateProblem(p).ok() || p.buffers.size() > 300) return 0;
  using Policy = sim::PlacementPolicy;
  CheckPlaced(p, sim::Place(p, {.policy = Policy::kFirstFit}).value(), "first-fit");
  CheckPlaced(p, sim::Place(p, {.policy = Policy::kBestFit}).value(), "best-fit");
  CheckPlaced(
      p,
      sim::Place(p, {.policy = Policy::kBest, .work_budget = 200'000, .node_budget = 20'000})
          .value(),
      "best");
  return 0;
}
