// The data of `loadplan plan`'s report and its two renderings (text, JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/phases/phases.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::cli {

struct PlanReport {
  std::string display_name;
  simulator::LoadPlan plan;
  simulator::MemoryPhases phases;
  std::optional<simulator::WidestMoment> widest;
  verifier::Assignment at;               // the user's --at values
  std::optional<uint64_t> device_bytes;  // --device-memory
  std::string device_label;              // "h200 (measured)" or the size text
  size_t warnings = 0;                   // verifier warnings (lints)

  // Does the peak fit the device for every admissible value (box) / at the user's values?
  [[nodiscard]] std::optional<bool> FitsBox() const;
  [[nodiscard]] std::optional<bool> FitsAt() const;
};

nlohmann::json ReportJson(const verifier::Manifest& m, const PlanReport& r);
std::string ReportText(const verifier::Manifest& m, const PlanReport& r);

}  // namespace loadplan::cli
