// `loadplan plan`: the load plan and the predicted device memory of a manifest, per phase,
// across the variable box, with the staging saving and a fits / does-not-fit verdict.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cmd_check.h"
#include "simulator/planner/planner.h"

namespace loadplan::cli {

struct PlanCliOptions {
  std::string file;             // manifest; empty: the embedded gpt-oss-120b example
  std::vector<std::string> at;  // --at VAR=VALUE (repeatable)
  std::optional<std::string>
      device_memory;              // --device-memory: a size ("139.8GiB") or a preset ("h200")
  Format format = Format::kText;  // --format text|json
  simulator::PlanOptions plan;    // --lanes, --prefetch, --placement
  // Load time (docs/load-time.md): --machine PROFILE (else, for --fit, the built-in H200
  // default), --cache hot|cold, --fit SIZE (the fastest configuration whose load peak fits).
  std::optional<std::string> machine;
  std::string cache = "hot";
  std::optional<std::string> fit;
};

// Prints the report on stdout (docs/planner.md, "The report"). Exit code:
// 0 planned (and fits the device memory, when one is given);
// 1 verification errors (printed), or the peak over the whole variable box exceeds the
//   given device memory (the report still prints);
//   (or, with --fit, no configuration fits SIZE);
// 2 unreadable input / not JSON, or a bad option value (--at, --device-memory, --machine,
//   --cache, --fit).
int RunPlan(const PlanCliOptions& options);

}  // namespace loadplan::cli
