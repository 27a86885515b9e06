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

}  // namespace loadplan::cli
