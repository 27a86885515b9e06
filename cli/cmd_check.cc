// `loadplan check`: verify manifests and print every diagnostic (text or JSON).
#include "cli/cmd_check.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/colour.h"
#include "cli/input.h"
#include "cli/json_out.h"
#include "verifier/diag.h"

namespace loadplan::cli {
namespace {

struct Counts {
  size_t errors = 0, warnings = 0;
};

Counts CountOf(const std::vector<verifier::Diagnostic>& diags) {
  Counts c;
  for (const auto& d : diags) (d.severity == verifier::Severity::kError ? c.errors : c.warnings)++;
  return c;
}

std::string Summary(const CheckedInput& in) {
  if (!in.read.ok()) return fmt::format("loadplan check: {}", in.read.message());
  const Counts c = CountOf(in.check.result.diags);
  return fmt::format("{}: {} error{}, {} warning{}", in.display_name, c.errors,
                     c.errors == 1 ? "" : "s", c.warnings, c.warnings == 1 ? "" : "s");
}

// The file's diagnostics as JSON, an unreadable file's one J3 included (the same keys as
// every other diagnostic).
nlohmann::json FileDiagnostics(const CheckedInput& in) {
  return nlohmann::json::parse(verifier::FormatJson(DiagnosticsOf(in), in.display_name));
}

// Several files: {"files": [{file, exit, errors, warnings, diagnostics}], errors, warnings}.
nlohmann::json FileSummary(const CheckedInput& in) {
  nlohmann::json diags = FileDiagnostics(in);
  const Counts c = CountOf(DiagnosticsOf(in));
  return {{"file", in.display_name},
          {"exit", ExitCodeOf(in)},
          {"errors", c.errors},
          {"warnings", c.warnings},
          {"diagnostics", std::move(diags)}};
}

}  // namespace

int RunCheck(const CheckOptions& options) {
  std::vector<std::string> files = options.files;
  if (files.empty()) files.push_back("");  // the embedded default example
  int code = 0;
  nlohmann::json all = nlohmann::json::array();
  nlohmann::json summaries = nlohmann::json::array();
  size_t errors = 0, warnings = 0;
  for (const auto& file : files) {
    CheckedInput in = LoadAndCheck(file);
    code = std::max(code, ExitCodeOf(in));
    if (options.format == Format::kJson) {
      if (files.size() == 1) {
        for (auto& d : FileDiagnostics(in)) all.push_back(std::move(d));
      } else {
        summaries.push_back(FileSummary(in));
        errors += summaries.back()["errors"].get<size_t>();
        warnings += summaries.back()["warnings"].get<size_t>();
      }
      continue;
    }
    if (in.read.ok())
      PrintDiagnostics(verifier::FormatText(in.check.result.diags, in.display_name), stdout);
    std::fputs((Summary(in) + "\n").c_str(), in.read.ok() ? stdout : stderr);
  }
  if (options.format == Format::kJson) {
    const nlohmann::json out =
        files.size() == 1
            ? all
            : nlohmann::json{{"files", summaries}, {"errors", errors}, {"warnings", warnings}};
    std::puts(DumpJson(out).c_str());
  }
  return code;
}

}  // namespace loadplan::cli
