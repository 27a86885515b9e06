// `loadplan plan`: read and verify a manifest, plan it, compute the phases, print the report.
#include "cli/cmd_plan.h"

#include <cstdio>

#include "cli/cmd_plan_report.h"
#include "cli/cmd_plan_time.h"
#include "cli/json_out.h"
#include "cli/pipeline.h"
#include "verifier/bind_assignment.h"
#include "verifier/diag.h"

namespace loadplan::cli {
namespace {

// Binds every --at value (verifier/bind_assignment.h); prints why not.
bool BindAt(const verifier::Manifest& m, const std::vector<std::string>& texts,
            verifier::Assignment& at) {
  base::Result<verifier::Assignment> bound = verifier::BindAssignment(m, texts);
  if (!bound.ok()) {
    std::fprintf(stderr, "loadplan plan: --at %s\n", bound.status().message().c_str());
    return false;
  }
  at = std::move(*bound);
  return true;
}

bool ResolveDevice(const PlanCliOptions& o, PlanReport& r) {
  if (!o.device_memory) return true;
  const std::optional<simulator::DeviceMemory> device =
      simulator::ResolveDeviceMemory(*o.device_memory);
  if (!device) {
    std::fprintf(stderr,
                 "loadplan plan: --device-memory %s: not a size (\"139.8GiB\", \"288GB\", bytes) "
                 "or a preset "
                 "(h200, b200, gb300)\n",
                 o.device_memory->c_str());
    return false;
  }
  r.device_bytes = device->bytes;
  r.device_label = device->label;
  return true;
}

size_t CountWarnings(const std::vector<verifier::Diagnostic>& diags) {
  size_t n = 0;
  for (const verifier::Diagnostic& d : diags) n += d.severity == verifier::Severity::kWarning;
  return n;
}

}  // namespace

int RunPlan(const PlanCliOptions& options) {
  const Outcome<CheckedInput> in = LoadVerified(
      options.file, {.command = "loadplan plan", .format = options.format, .colour = true});
  if (!in.ok()) return in.exit_code();
  const verifier::Manifest& m = *in->check.manifest;
  PlanReport r{.display_name = in->display_name};
  if (!BindAt(m, options.at, r.at) || !ResolveDevice(options, r)) return 2;
  r.warnings = CountWarnings(in->check.result.diags);
  Outcome<simulator::LoadPlan> plan =
      PlanChecked(*in->check.result.verified, options.plan, "loadplan plan");
  if (!plan.ok()) return plan.exit_code();
  r.plan = std::move(*plan);
  if (int rc = AddLoadTime(options, *in->check.result.verified, r); rc != 0) return rc;
  r.phases = simulator::ComputePhases(m, r.plan, r.at);
  r.widest = simulator::FindWidestMoment(r.plan);
  if (options.format == Format::kJson) {
    std::puts(DumpJson(ReportJson(m, r)).c_str());
  } else {
    std::fputs((ReportText(m, r) + LoadTimeText(r)).c_str(), stdout);
  }
  return r.FitsBox().value_or(true) && FitFound(r) ? 0 : 1;
}

}  // namespace loadplan::cli
