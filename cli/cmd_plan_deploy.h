// `loadplan plan DEPLOY.json`: a deployment of pipeline stages (docs/deploy.md), each stage
// verified and planned as `plan` plans one manifest, the boundaries between them checked, one
// row per GPU printed.
#pragma once

#include <string>

#include "cli/cmd_plan.h"
#include "cli/cmd_plan_report.h"
#include "cli/input.h"
#include "cli/pipeline.h"

namespace loadplan::cli {

// What `plan` computes for one verified manifest: --at bound, the device and reserve resolved,
// the plan (self-checked), its load time when asked, the phases and the widest moment. Exit 2
// on a bad option value, 4 when the plan checker objects (messages printed).
[[nodiscard]] Outcome<PlanReport> MakePlanReport(const PlanCliOptions& options,
                                                 const CheckedInput& in);

// Exit code: 0 every stage planned and fits its device (or no device is given); 1 a stage does
// not fit, the deployment file has errors (X1), a stage manifest has verification errors, or a
// boundary does not match (X3..X6); 2 a stage manifest cannot be read or is not JSON (X2), a
// bad option value (--at, --reserve, a device), or an option a deployment does not take
// (--svg, --fit, --machine, --device-memory free); 4 a planner bug caught by the plan checker.
int RunPlanDeployment(const PlanCliOptions& options);

}  // namespace loadplan::cli
