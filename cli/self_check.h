// The commands check the planner's and the placer's output with the independent checkers
// (simulator/check/) before printing or running it: a violation is a bug in loadplan, so it
// is reported and the command stops (exit kInternalError), never used silently.
#pragma once

#include <string_view>

#include "simulator/placement/placement.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::cli {

inline constexpr int kInternalError = 4;

// True when CheckPlan(m, plan) is empty; else prints each violation to stderr as
// "<command>: internal error: ..." and returns false.
bool PlanPassesChecker(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                       std::string_view command);

// The same with CheckPlacement for a placement of `problem`.
bool PlacementPassesChecker(const simulator::PlacementProblem& problem,
                            const simulator::Placement& placement, std::string_view command);

}  // namespace loadplan::cli
