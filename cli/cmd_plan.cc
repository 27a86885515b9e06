// `loadplan plan`: read and verify a manifest, plan it, compute the phases, print the report.
#include "cli/cmd_plan.h"

#include <cctype>
#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include "cli/cmd_plan_report.h"
#include "cli/colour.h"
#include "cli/input.h"
#include "cli/json_out.h"
#include "cli/self_check.h"
#include "verifier/diag.h"

namespace loadplan::cli {
namespace {

// Binds every --at value; names must be declared variables and values inside their range.
bool BindAt(const verifier::Manifest& m, const std::vector<std::string>& texts, verifier::Assignment& at) {
  for (const std::string& text : texts) {
    std::string error;
    const auto binding = ParseAtBinding(text, error);
    if (!binding) {
      std::fprintf(stderr, "loadplan plan: --at %s: %s\n", text.c_str(), error.c_str());
      return false;
    }
    const verifier::Variable* v = m.FindVar(binding->first);
    if (v == nullptr) {
      std::fprintf(stderr, "loadplan plan: --at %s: no variable `%s` in the manifest\n", text.c_str(),
                   binding->first.c_str());
      return false;
    }
    if (binding->second < v->min || binding->second > v->max) {
      std::fprintf(stderr, "loadplan plan: --at %s: outside [%lld, %lld]\n", text.c_str(),
                   static_cast<long long>(v->min), static_cast<long long>(v->max));
      return false;
    }
    if (!at.emplace(binding->first, binding->second).second) {
      std::fprintf(stderr, "loadplan plan: --at %s: `%s` is already bound (--at %s=%lld)\n", text.c_str(),
                   binding->first.c_str(), binding->first.c_str(), static_cast<long long>(at.at(binding->first)));
      return false;
    }
  }
  return true;
}

bool ResolveDevice(const PlanCliOptions& o, PlanReport& r) {
  if (!o.device_memory) return true;
  r.device_bytes = simulator::ParseDeviceMemory(*o.device_memory);
  if (!r.device_bytes) {
    std::fprintf(stderr, "loadplan plan: --device-memory %s: not a size (\"139.8GiB\", \"288GB\", bytes) or a preset "
                 "(h200, b200, gb300)\n", o.device_memory->c_str());
    return false;
  }
  r.device_label = *o.device_memory;
  for (const simulator::DevicePreset& p : simulator::DevicePresets()) {
    std::string lower = *o.device_memory;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == p.name) r.device_label = fmt::format("{} ({})", p.name, p.measured ? "measured" : "nominal");
  }
  return true;
}

size_t CountWarnings(const std::vector<verifier::Diagnostic>& diags) {
  size_t n = 0;
  for (const verifier::Diagnostic& d : diags) n += d.severity == verifier::Severity::kWarning;
  return n;
}

}  // namespace

std::optional<std::pair<std::string, int64_t>> ParseAtBinding(const std::string& text, std::string& error) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "expected VAR=VALUE";
    return std::nullopt;
  }
  int64_t value = 0;
  const char* begin = text.data() + eq + 1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end) {
    error = "VALUE must be an integer";
    return std::nullopt;
  }
  return std::pair(text.substr(0, eq), value);
}

int RunPlan(const PlanCliOptions& options) {
  const CheckedInput in = LoadAndCheck(options.file);
  const bool unusable = !in.read_error.empty() || !in.check.parsed || !in.check.manifest || !in.check.result.ok();
  if (unusable && options.format == Format::kJson) {
    // Tools asked for JSON: the diagnostics (or the J3 of an unreadable file), as `check` prints them.
    std::fputs(verifier::FormatJson(DiagnosticsOf(in), in.display_name).c_str(), stdout);
    return in.read_error.empty() && in.check.parsed ? 1 : 2;
  }
  if (!in.read_error.empty()) {
    std::fprintf(stderr, "loadplan plan: %s\n", in.read_error.c_str());
    return 2;
  }
  if (unusable) {
    PrintDiagnostics(verifier::FormatText(in.check.result.diags, in.display_name), stderr);
    return in.check.parsed ? 1 : 2;
  }
  const verifier::Manifest& m = *in.check.manifest;
  PlanReport r{.display_name = in.display_name};
  if (!BindAt(m, options.at, r.at) || !ResolveDevice(options, r)) return 2;
  r.warnings = CountWarnings(in.check.result.diags);
  r.plan = simulator::Plan(*in.check.result.verified, options.plan);
  if (!PlanPassesChecker(m, r.plan, "loadplan plan")) return kInternalError;
  r.phases = simulator::ComputePhases(m, r.plan, r.at);
  r.widest = simulator::FindWidestMoment(r.plan);
  if (options.format == Format::kJson) {
    std::puts(DumpJson(ReportJson(m, r)).c_str());
  } else {
    std::fputs(ReportText(m, r).c_str(), stdout);
  }
  return r.FitsBox().value_or(true) ? 0 : 1;
}

}  // namespace loadplan::cli
