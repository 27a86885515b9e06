// `plan --fit SIZE`: the fastest predicted load configuration whose load peak fits SIZE.
// Enumerates lanes x prefetch x placement policy (staged) and lanes (naive), plans each (the
// planner is a pure function), predicts each (predict.h), keeps those whose load peak
// (resident + arena, both rounded) is at most SIZE, ranks them by predicted total time, then
// the manifest's own lanes and prefetch (`own_*`, searched beside the grid's: the model sees
// neither a lane's order nor every wait for the arena, which the manifest's author may have
// measured), then smaller peak, fewer lanes, less prefetch, simpler policy. When none fits, the
// smallest peak found says how much is missing, and the floor (resident + the arena's lower bound,
// rounded) what no placement can go below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/planner/planner.h"
#include "simulator/timing/predict.h"
#include "verifier/verify.h"

namespace loadplan::simulator::timing {

struct FitOptions {
  uint64_t size = 0;       // device bytes the load may use
  PredictOptions predict;  // cache state
  PlanOptions base;        // alignment, granularity (lanes/prefetch/placement are varied)
  std::vector<uint32_t> lanes = {1, 2, 4, 8};
  std::vector<uint32_t> prefetch = {0, 1, 2};
  std::vector<PlacementPolicy> policies = {PlacementPolicy::kFirstFit, PlacementPolicy::kBestFit,
                                           PlacementPolicy::kBest, PlacementPolicy::kExact};
  bool naive = true;  // also the naive baseline (every source a resident weight), per lane count
  // The manifest's own load options (unset where the user fixed them): added to the grids and
  // preferred among equal predictions.
  std::optional<uint32_t> own_lanes, own_prefetch;
};

struct FitCandidate {
  PlanOptions options;
  uint64_t load_peak = 0;
  uint64_t floor = 0;  // resident + lower bound of the arena, rounded: no placement goes lower
  LoadTimePrediction prediction;
  bool fits = false;
  bool own = false;           // staged on the manifest's own lanes and prefetch
  std::string Label() const;  // "staged, lanes 4, prefetch 1, best-fit" / "naive, lanes 1"
};

struct FitResult {
  uint64_t size = 0;
  std::vector<FitCandidate>
      ranked;          // every candidate: those that fit first (by time), then the rest by peak
  size_t fitting = 0;  // ranked[0, fitting) fit
  [[nodiscard]] const FitCandidate* choice() const { return fitting ? &ranked[0] : nullptr; }
  // The smallest peak of all (the answer to "what would fit" when nothing does).
  [[nodiscard]] const FitCandidate* smallest() const;
  // The fastest of all, fitting or not.
  [[nodiscard]] const FitCandidate* fastest() const;
};

// Plans every configuration of `options` (|lanes| x (|prefetch| x |policies| + naive) plans).
FitResult FitSearch(const verifier::VerifiedManifest& verified, const MachineProfile& profile,
                    const FitOptions& options);

nlohmann::json FitJson(const FitResult& r, const MachineProfile& profile);
std::string FitText(const FitResult& r, const MachineProfile& profile, size_t runners_up = 5);

}  // namespace loadplan::simulator::timing
