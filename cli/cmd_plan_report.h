// `loadplan plan`'s report: its data and JSON rendering live in api/plan_report.h (shared with
// the Python package); the text rendering is here.
#pragma once

#include <string>

#include "api/plan_report.h"
#include "verifier/manifest.h"

namespace loadplan::cli {

using api::PlanReport;
using api::ReportJson;

std::string ReportText(const verifier::Manifest& m, const PlanReport& r);
// The fit frontier (cli/cmd_plan_frontier.cc); "" when there is none to print.
std::string FrontierText(const verifier::Manifest& m, const PlanReport& r);
// `plan --svg PATH`: the capacity picture (cli/render/capacity_svg.h) of the report's frontier;
// 0 written, 2 on a manifest with fewer than two variables or a write failure (said on stderr).
int WriteCapacitySvg(const verifier::Manifest& m, const PlanReport& r, const std::string& path);

}  // namespace loadplan::cli
