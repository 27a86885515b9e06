// The shared pipeline of the manifest commands: load, check, report, plan, self-check.
#include "cli/pipeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/colour.h"
#include "cli/self_check.h"
#include "verifier/diag.h"

namespace loadplan::cli {
namespace {

std::string_view Who(const Reporting& how, const CheckedInput& in) {
  return how.command.empty() ? std::string_view(in.display_name) : std::string_view(how.command);
}

void PrintText(const CheckedInput& in, const Reporting& how) {
  const std::string text = verifier::FormatText(in.check.result.diags, in.display_name);
  if (how.colour) {
    PrintDiagnostics(text, stderr);
  } else {
    std::fputs(text.c_str(), stderr);
  }
}

}  // namespace

Outcome<CheckedInput> LoadVerified(const std::string& file, const Reporting& how,
                                   std::string text) {
  CheckedInput in = LoadAndCheck(file, std::move(text));
  const int code = ExitCodeOf(in);
  if (code == 0) {
    if (how.warnings_when_clean) PrintText(in, how);
    return in;
  }
  if (how.format == Format::kJson) {
    // Tools asked for JSON: the diagnostics (or the J3 of an unreadable file), as `check` prints
    // them.
    std::fputs(verifier::FormatJson(DiagnosticsOf(in), in.display_name).c_str(), stdout);
    return Outcome<CheckedInput>::Exit(code);
  }
  if (!in.read.ok()) {
    const std::string who(Who(how, in));
    std::fprintf(stderr, "%s: %s\n", who.c_str(), in.read.message().c_str());
    return Outcome<CheckedInput>::Exit(code);
  }
  PrintText(in, how);
  if (code == 1 && how.say_not_planned) {
    std::fprintf(stderr, "%s: not planned: the manifest has verification errors\n",
                 in.display_name.c_str());
  }
  return Outcome<CheckedInput>::Exit(code);
}

Outcome<simulator::LoadPlan> PlanChecked(const verifier::VerifiedManifest& manifest,
                                         const simulator::PlanOptions& options,
                                         std::string_view who) {
  simulator::LoadPlan plan = simulator::Plan(manifest, options);
  if (!PlanPassesChecker(manifest.manifest(), plan, who))
    return Outcome<simulator::LoadPlan>::Exit(kInternalError);
  return plan;
}

Outcome<PlannedInput> LoadAndPlan(const std::string& file, const simulator::PlanOptions& options,
                                  const Reporting& how) {
  Outcome<CheckedInput> in = LoadVerified(file, how);
  if (!in.ok()) return Outcome<PlannedInput>::Exit(in.exit_code());
  Outcome<simulator::LoadPlan> plan =
      PlanChecked(*in->check.result.verified, options, Who(how, *in));
  if (!plan.ok()) return Outcome<PlannedInput>::Exit(plan.exit_code());
  return PlannedInput{.input = std::move(*in), .plan = std::move(*plan)};
}

base::Status WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0)
      return {};
    std::clearerr(stdout);  // the caller says so, once: FinishStdout has nothing more to add
    return base::Status::Error("cannot write to stdout", base::ErrorKind::kIo);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (out) return {};
  return base::Status::Error("cannot write " + path, base::ErrorKind::kIo);
}

int FinishStdout(int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return code;
  // The write that failed is gone by now (stdio keeps no errno): say what can still be known.
  const char* why = error != 0 ? std::strerror(error)
                    : ::fcntl(STDOUT_FILENO, F_GETFD) == -1
                        ? "stdout is closed"
                        : "a write failed (a full disk or device?)";
  fmt::print(stderr, "loadplan: cannot write to stdout: {}: the output is lost\n", why);
  std::clearerr(stdout);
  return code < 2 ? 2 : code;
}

std::string Extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

}  // namespace loadplan::cli
