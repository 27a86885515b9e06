// The planner's and the placer's output through the independent checkers.
#include "cli/self_check.h"

#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "simulator/check/placement_check.h"
#include "simulator/check/plan_check.h"

namespace loadplan::cli {

bool PlanPassesChecker(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                       std::string_view command) {
  const std::vector<simulator::PlanViolation> violations = simulator::CheckPlan(m, plan);
  for (const simulator::PlanViolation& v : violations) {
    fmt::print(stderr, "{}: internal error: the plan checker rejects the plan ({}): {}\n", command,
               simulator::PlanViolationKindName(v.kind), v.message);
  }
  return violations.empty();
}

bool PlacementPassesChecker(const simulator::PlacementProblem& problem,
                            const simulator::Placement& placement, std::string_view command) {
  const std::vector<simulator::PlacementViolation> violations =
      simulator::CheckPlacement(problem, placement, 20);
  for (const simulator::PlacementViolation& v : violations) {
    fmt::print(stderr, "{}: internal error: the placement checker rejects the placement: {}\n",
               command, v.message);
  }
  return violations.empty();
}

}  // namespace loadplan::cli
