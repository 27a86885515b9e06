// `loadplan plan --machine PROFILE [--cache hot|cold] [--fit SIZE]`: the load-time prediction
// and the configuration search (simulator/timing), added to the plan report.
#pragma once

#include <string>

#include "cli/cmd_plan.h"
#include "cli/cmd_plan_report.h"
#include "verifier/verify.h"

namespace loadplan::cli {

// Reads the profile (--machine, else the built-in default when --fit is given), runs --fit
// (whose choice, or else the smallest peak, becomes r.plan) and predicts r.plan's load time.
// Returns 0, or 2 after printing why an option is bad (the profile's error names its pointer).
int AddLoadTime(const PlanCliOptions& o, const verifier::VerifiedManifest& verified, PlanReport& r);

// The report's load-time and fit sections as text ("" when neither was asked for).
std::string LoadTimeText(const PlanReport& r);

// False when --fit found nothing that fits.
bool FitFound(const PlanReport& r);

}  // namespace loadplan::cli
