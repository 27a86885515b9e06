// `loadplan check`: verify manifests and print every diagnostic (text or JSON).
#include "cli/cmd_check.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/input.h"
#include "verifier/diag.h"

namespace loadplan::cli {
namespace {

int ExitCodeOf(const CheckedInput& in) {
  if (!in.read_error.empty() || !in.check.parsed) return 2;
  return in.check.result.ok() ? 0 : 1;
}

std::string Summary(const CheckedInput& in) {
  if (!in.read_error.empty()) return fmt::format("loadplan check: {}", in.read_error);
  size_t errors = 0, warnings = 0;
  for (const auto& d : in.check.result.diags) {
    (d.severity == verifier::Severity::kError ? errors : warnings)++;
  }
  return fmt::format("{}: {} error{}, {} warning{}", in.display_name, errors, errors == 1 ? "" : "s",
                     warnings, warnings == 1 ? "" : "s");
}

}  // namespace

int RunCheck(const CheckOptions& options) {
  std::vector<std::string> files = options.files;
  if (files.empty()) files.push_back("");  // the embedded default example
  int code = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& file : files) {
    CheckedInput in = LoadAndCheck(file);
    code = std::max(code, ExitCodeOf(in));
    if (options.format == Format::kJson) {
      if (!in.read_error.empty()) {
        all.push_back({{"severity", "error"}, {"code", "IO"}, {"file", in.display_name},
                       {"pointer", ""}, {"message", in.read_error}});
        continue;
      }
      for (auto& d : nlohmann::json::parse(verifier::FormatJson(in.check.result.diags, in.display_name))) {
        all.push_back(std::move(d));
      }
      continue;
    }
    if (in.read_error.empty()) {
      std::fputs(verifier::FormatText(in.check.result.diags, in.display_name).c_str(), stdout);
    }
    std::fputs((Summary(in) + "\n").c_str(), in.read_error.empty() ? stdout : stderr);
  }
  if (options.format == Format::kJson) std::puts(all.dump(2).c_str());
  return code;
}

}  // namespace loadplan::cli
