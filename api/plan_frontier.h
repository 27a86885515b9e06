// The fit frontier of a plan report (docs/capacity.md): computed when a device is given and the
// peak does not fit over the whole box, and its JSON (the "frontier" key of `loadplan plan
// --format json` and of the Python package's Plan.to_dict()).
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "api/plan_report.h"
#include "simulator/capacity/frontier.h"
#include "verifier/manifest.h"

namespace loadplan::api {

// The frontier of the report's phases against its budget (a device must be given), whether or
// not the box fits; the ladders get the report's --at values.
simulator::capacity::Frontier FrontierOf(const verifier::Manifest& m, const PlanReport& r);
simulator::capacity::PeakModel PeakModelOf(const verifier::Manifest& m, const PlanReport& r);

// nullopt without a device, or when the peak fits the budget over the whole box. The ladders
// get the report's --at values. Cost: ComputeFrontier's (milliseconds for two variables).
std::optional<simulator::capacity::Frontier> ReportFrontier(const verifier::Manifest& m,
                                                            const PlanReport& r);

// null for nullopt. Bytes are integers; every limit carries its status and both verification
// points: {"largest", "status", "peak": {bytes, at}, "past": {bytes, at, error} | null}.
nlohmann::json FrontierJson(const std::optional<simulator::capacity::Frontier>& f);

}  // namespace loadplan::api
