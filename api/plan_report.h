// The data of a plan report (a plan, its symbolic phases, the widest moment, a device to fit)
// and its JSON rendering: `loadplan plan --format json` and the Python package's Plan.to_dict()
// print the same object. The text rendering stays in cli/ (cmd_plan_report.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/phases/phases.h"
#include "simulator/plan.h"
#include "simulator/timing/fit.h"
#include "verifier/manifest.h"

namespace loadplan::api {

struct PlanReport {
  std::string display_name;
  simulator::LoadPlan plan;
  simulator::MemoryPhases phases;
  std::optional<simulator::WidestMoment> widest;
  verifier::Assignment at;               // the user's --at values
  std::optional<uint64_t> device_bytes;  // --device-memory
  std::string device_label;              // "h200 (measured)" or the size text
  std::string device_figure;             // "total" (presets), "free" (read now), "" (a size)
  uint64_t reserve_bytes = 0;            // --reserve: bytes the manifest does not hold
  size_t warnings = 0;                   // verifier warnings (lints)
  // plan --machine / --fit (simulator/timing): the profile used, the plan's predicted load
  // time, the configuration search. JSON keys "load_time" and "fit" (plan_report_time.cc).
  std::optional<simulator::timing::MachineProfile> machine;
  std::optional<simulator::timing::LoadTimePrediction> load_time;
  std::optional<simulator::timing::FitResult> fit;

  // What the manifest's buffers may use: device less reserve (0 when the reserve is larger).
  [[nodiscard]] std::optional<uint64_t> BudgetBytes() const;
  // Does the peak fit the budget for every admissible value (box) / at the user's values?
  [[nodiscard]] std::optional<bool> FitsBox() const;
  [[nodiscard]] std::optional<bool> FitsAt() const;
  // Whether --at binds every variable of `m` and the peak there is known: the verdict's point.
  [[nodiscard]] bool AtPoint(const verifier::Manifest& m) const;
  // The verdict: at the --at point when AtPoint(m), else over the box.
  [[nodiscard]] std::optional<bool> Fits(const verifier::Manifest& m) const;
};

nlohmann::json ReportJson(const verifier::Manifest& m, const PlanReport& r);
// Adds "load_time" and "fit" to a ReportJson object when the report has them.
void AddTimingJson(const PlanReport& r, nlohmann::json& j);

}  // namespace loadplan::api
