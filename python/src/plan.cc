// plan_json(): the report `loadplan plan --format json` prints (api/plan_report.h builds it for
// both), for manifest text and the plan command's options.
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "api/loadplan.h"
#include "api/plan_report.h"
#include "python/src/bindings.h"
#include "simulator/phases/phases.h"
#include "verifier/bind_assignment.h"

namespace loadplan::python {
namespace {

struct PlanArgs {
  std::optional<int64_t> lanes, prefetch;
  std::string placement;
  std::vector<std::string> at;  // "VAR=VALUE"
  std::optional<std::string> device_memory;
  bool naive = false;
};

base::Status Fill(const verifier::Manifest& m, const PlanArgs& a, api::PlanReport& r) {
  base::Result<verifier::Assignment> at = verifier::BindAssignment(m, a.at);
  if (!at.ok()) return at.status().WithContext("at");
  r.at = std::move(*at);
  if (!a.device_memory) return {};
  const std::optional<simulator::DeviceMemory> d = simulator::ResolveDeviceMemory(*a.device_memory);
  if (!d) {
    return base::Status::Error(fmt::format(
        "device_memory {}: not a size (\"139.8GiB\", \"288GB\", bytes) or a preset ({})",
        *a.device_memory, simulator::PresetNames()));
  }
  r.device_bytes = d->bytes;
  r.device_label = d->label;
  r.device_figure = d->preset != nullptr ? std::string(d->preset->figure) : "";
  return {};
}

base::Result<std::string> PlanJson(const std::string& text, const std::string& file,
                                   const PlanArgs& a) {
  const verifier::CheckOutput in = api::CheckText(text);
  if (!in.result.verified) return base::Status::Error("the manifest has verification errors");
  base::Result<simulator::PlanOptions> options =
      PlanOptionsOf(a.lanes, a.prefetch, a.placement, a.naive);
  if (!options.ok()) return options.status();
  const verifier::Manifest& m = *in.manifest;
  api::PlanReport r{.display_name = file};
  if (base::Status s = Fill(m, a, r); !s.ok()) return s;
  for (const verifier::Diagnostic& d : in.result.diags)
    r.warnings += d.severity == verifier::Severity::kWarning;
  base::Result<simulator::LoadPlan> plan = api::PlanLoad(*in.result.verified, *options);
  if (!plan.ok()) return plan.status();
  r.plan = std::move(*plan);
  r.phases = simulator::ComputePhases(m, r.plan, r.at);
  r.widest = simulator::FindWidestMoment(r.plan);
  return api::ReportJson(m, r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PlanJsonOrRaise(const std::string& text, const std::string& file,
                            std::optional<int64_t> lanes, std::optional<int64_t> prefetch,
                            const std::string& placement, const std::vector<std::string>& at,
                            std::optional<std::string> device_memory, bool naive) {
  const PlanArgs a{lanes, prefetch, placement, at, std::move(device_memory), naive};
  std::optional<base::Result<std::string>> out;
  {
    nb::gil_scoped_release nogil;
    out.emplace(PlanJson(text, file, a));
  }
  if (!out->ok()) RaiseStatus(out->status(), "plan");
  return std::move(**out);
}

}  // namespace

base::Result<simulator::PlanOptions> PlanOptionsOf(std::optional<int64_t> lanes,
                                                   std::optional<int64_t> prefetch,
                                                   const std::string& placement, bool naive) {
  // The CLI's bounds (--lanes 1..1024, --prefetch 0..2^31-1), as kOption: OptionError.
  if (lanes && (*lanes < 1 || *lanes > 1024))
    return base::Status::Error(fmt::format("lanes (--lanes) {} is not in [1, 1024]", *lanes),
                               base::ErrorKind::kOption);
  if (prefetch && (*prefetch < 0 || *prefetch > INT32_MAX))
    return base::Status::Error(
        fmt::format("prefetch (--prefetch) {} is not in [0, 2147483647]", *prefetch),
        base::ErrorKind::kOption);
  simulator::PlanOptions o{.naive = naive};
  if (lanes) o.lanes = static_cast<uint32_t>(*lanes);
  if (prefetch) o.prefetch = static_cast<uint32_t>(*prefetch);
  if (!placement.empty()) {
    const std::optional<simulator::PlacementPolicy> p = simulator::ParsePlacementPolicy(placement);
    if (!p)
      return base::Status::Error(fmt::format("placement {}: not a policy", placement),
                                 base::ErrorKind::kOption);
    o.placement = *p;
  }
  return o;
}

void BindPlan(nb::module_& m) {
  m.def("plan_json", &PlanJsonOrRaise, nb::arg("text"), nb::arg("file"), nb::arg("lanes").none(),
        nb::arg("prefetch").none(), nb::arg("placement"), nb::arg("at"),
        nb::arg("device_memory").none(), nb::arg("naive"),
        "Plans verified manifest text; returns the report `loadplan plan --format json` prints.");
}

}  // namespace loadplan::python
