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
      device_memory;  // --device-memory: a size ("139.8GiB"), a preset ("h200") or "free"
  std::optional<std::string> reserve;  // --reserve: a size the manifest does not hold
  int device = 0;                      // --device: the GPU `--device-memory free` reads
  std::string svg;                     // --svg PATH: the capacity picture (needs --device-memory)
  Format format = Format::kText;       // --format text|json
  simulator::PlanOptions plan;         // --lanes, --prefetch, --placement
  // Load time (docs/load-time.md): --machine PROFILE (else, for --fit, the built-in H200
  // default), --cache hot|cold, --fit SIZE (the fastest configuration whose load peak fits).
  std::optional<std::string> machine;
  std::string cache = "hot";
  std::optional<std::string> fit;
};

// Prints the report on stdout (docs/planner.md, "The report"). Exit code:
// 0 planned (and fits the budget, when --device-memory is given: device less --reserve);
// 1 verification errors (printed), or the peak exceeds the budget (the report still prints,
//   with the fit frontier): judged at the --at point when --at binds every variable, else
//   over the whole variable box;
// 2 unreadable input / not JSON, or a bad option value (--at, --device-memory, --reserve, a
//   reserve that leaves no budget, --reserve without --device-memory), or --device-memory
//   free without a usable GPU, or --svg without --device-memory, on a manifest with fewer than
//   two variables, or unwritable; a bad --machine, --cache or --fit;
// 1 also when, with --fit, no configuration fits SIZE.
int RunPlan(const PlanCliOptions& options);

}  // namespace loadplan::cli
