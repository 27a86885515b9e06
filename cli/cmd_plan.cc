// `loadplan plan`: read and verify a manifest, plan it, compute the phases, print the report.
#include "cli/cmd_plan.h"

#include <cctype>
#include <cstdio>

#include <fmt/format.h>

#include "api/launch.h"
#include "backend/cuda/free_memory.h"
#include "base/bytes.h"
#include "cli/cmd_plan_deploy.h"
#include "cli/cmd_plan_report.h"
#include "cli/cmd_plan_time.h"
#include "cli/json_out.h"
#include "cli/pipeline.h"
#include "simulator/phases/phases.h"
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

// `--device-memory free`: what the GPU has free now (after this process's context).
bool ReadFreeMemory(int device, PlanReport& r) {
  base::Result<backend::DeviceMemInfo> info = backend::QueryDeviceMemory(device);
  if (!info.ok()) {
    std::fprintf(stderr, "loadplan plan: --device-memory free: cannot read GPU %d: %s\n", device,
                 info.status().message().c_str());
    return false;
  }
  r.device_bytes = info->free;
  r.device_label = fmt::format("free on GPU {} ({}, {} total)", device, info->name,
                               base::FormatGiB(info->total));
  r.device_figure = "free";
  return true;
}

bool ResolveDevice(const PlanCliOptions& o, PlanReport& r) {
  if (!o.device_memory) {
    if (o.svg.empty()) return true;
    std::fprintf(stderr, "loadplan plan: --svg %s: needs --device-memory (the picture's budget)\n",
                 o.svg.c_str());
    return false;
  }
  std::string lower = *o.device_memory;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "free") return ReadFreeMemory(o.device, r);
  const std::optional<simulator::DeviceMemory> device =
      simulator::ResolveDeviceMemory(*o.device_memory);
  if (!device) {
    std::fprintf(stderr,
                 "loadplan plan: --device-memory %s: not a size (\"139.8GiB\", \"288GB\", bytes), "
                 "a preset (%s) or free\n",
                 o.device_memory->c_str(), simulator::PresetNames().c_str());
    return false;
  }
  r.device_bytes = device->bytes;
  r.device_label = device->label;
  r.device_figure = device->preset != nullptr ? std::string(device->preset->figure) : "";
  return true;
}

// --reserve: a size, below the device memory (a budget of 0 bytes or less fits nothing).
bool ResolveReserve(const PlanCliOptions& o, PlanReport& r) {
  if (!o.reserve) return true;
  if (!o.device_memory) {
    std::fprintf(stderr,
                 "loadplan plan: --reserve %s: needs --device-memory (it is taken from it)\n",
                 o.reserve->c_str());
    return false;
  }
  const std::optional<uint64_t> bytes = simulator::ParseByteSize(*o.reserve);
  if (!bytes) {
    std::fprintf(
        stderr,
        "loadplan plan: --reserve %s: not a size (\"512MiB\", \"1.5GiB\", \"2GB\", bytes)\n",
        o.reserve->c_str());
    return false;
  }
  if (*bytes >= *r.device_bytes) {
    std::fprintf(stderr,
                 "loadplan plan: --reserve %s (%s) leaves no budget: --device-memory %s is %s\n",
                 o.reserve->c_str(), base::FormatGiB(*bytes).c_str(), o.device_memory->c_str(),
                 base::FormatGiB(*r.device_bytes).c_str());
    return false;
  }
  r.reserve_bytes = *bytes;
  return true;
}

size_t CountWarnings(const std::vector<verifier::Diagnostic>& diags) {
  size_t n = 0;
  for (const verifier::Diagnostic& d : diags) n += d.severity == verifier::Severity::kWarning;
  return n;
}

}  // namespace

Outcome<PlanReport> MakePlanReport(const PlanCliOptions& options, const CheckedInput& in) {
  const verifier::Manifest& m = *in.check.manifest;
  PlanReport r{.display_name = in.display_name};
  if (!BindAt(m, options.at, r.at) || !ResolveDevice(options, r) || !ResolveReserve(options, r))
    return Outcome<PlanReport>::Exit(2);
  r.warnings = CountWarnings(in.check.result.diags);
  Outcome<simulator::LoadPlan> plan =
      PlanChecked(*in.check.result.verified, options.plan, "loadplan plan");
  if (!plan.ok()) return Outcome<PlanReport>::Exit(plan.exit_code());
  r.plan = std::move(*plan);
  if (int rc = AddLoadTime(options, *in.check.result.verified, r); rc != 0)
    return Outcome<PlanReport>::Exit(rc);
  r.phases = simulator::ComputePhases(m, r.plan, r.at);
  r.widest = simulator::FindWidestMoment(r.plan);
  return r;
}

int RunPlan(const PlanCliOptions& options) {
  if (api::IsDeploymentFile(options.file)) return RunPlanDeployment(options);
  const Outcome<CheckedInput> in = LoadVerified(
      options.file, {.command = "loadplan plan", .format = options.format, .colour = true});
  if (!in.ok()) return in.exit_code();
  const verifier::Manifest& m = *in->check.manifest;
  Outcome<PlanReport> report = MakePlanReport(options, *in);
  if (!report.ok()) return report.exit_code();
  const PlanReport& r = *report;
  if (!options.svg.empty()) {
    if (const int rc = WriteCapacitySvg(m, r, options.svg); rc != 0) return rc;
  }
  if (options.format == Format::kJson) {
    std::puts(DumpJson(ReportJson(m, r)).c_str());
  } else {
    std::fputs((ReportText(m, r) + LoadTimeText(r)).c_str(), stdout);
  }
  return r.Fits(m).value_or(true) && FitFound(r) ? 0 : 1;
}

}  // namespace loadplan::cli
