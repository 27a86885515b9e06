// The load-time parts of `plan --format json` (plan --machine, --fit): see plan_report.h.
#include "api/plan_report.h"

namespace loadplan::api {

void AddTimingJson(const PlanReport& r, nlohmann::json& j) {
  if (!r.machine) return;
  if (r.load_time) j["load_time"] = simulator::timing::PredictionJson(*r.load_time, *r.machine);
  if (r.fit) j["fit"] = simulator::timing::FitJson(*r.fit, *r.machine);
}

}  // namespace loadplan::api
