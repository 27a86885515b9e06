// The pipeline every manifest command shares: load (a file, or the embedded default example)
// -> check -> print the diagnostics -> an exit code, then plan -> self-check (exit 4) -> the
// plan; and the output end: one WriteOutput. `check` uses the first half per file.
//
// Exit codes (README): 1 verification errors; 2 unreadable input or not JSON; 4 the plan
// checker caught a planner bug (cli/self_check.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "cli/cmd_check.h"
#include "cli/input.h"
#include "simulator/plan.h"
#include "simulator/planner/planner.h"
#include "verifier/verify.h"

namespace loadplan::cli {

// A value for the next step, or the exit code the command ends with (its messages printed).
template <class T>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : value_(std::move(value)) {}  // NOLINT: implicit, like base::Result
  [[nodiscard]] static Outcome Exit(int code) { return Outcome(ExitTag{}, code); }

  [[nodiscard]] bool ok() const { return value_.has_value(); }
  [[nodiscard]] int exit_code() const { return exit_code_; }  // 0 when ok
  // Precondition: ok().
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  struct ExitTag {};
  Outcome(ExitTag, int code) : exit_code_(code) {}
  std::optional<T> value_;
  int exit_code_ = 0;
};

// How a command reports on its input. The commands differ only in these choices, each kept
// so that no command's output changes.
struct Reporting {
  // Names the command in the read-error line ("loadplan plan: cannot open x.json: ...") and in
  // the self-check's lines; empty: the input's display name (graph, timeline).
  std::string command;
  Format format =
      Format::kText;    // kJson: a manifest that fails prints its diagnostics as JSON on stdout
  bool colour = false;  // diagnostics coloured on a terminal (cli/colour.h)
  bool warnings_when_clean = false;  // print a verified manifest's diagnostics (warnings) too
  bool say_not_planned =
      false;  // after errors: "<name>: not planned: the manifest has verification errors"

  // graph and timeline: every diagnostic on stderr, the display name in every line.
  [[nodiscard]] static Reporting ForRendering() {
    return {.warnings_when_clean = true, .say_not_planned = true};
  }
};

// Loads and checks `file` (empty: the embedded default example) and prints its diagnostics as
// `how` says. Ok: a manifest that verifies (check.result.verified is set).
// `text`: the file's text when already read (LoadAndCheck).
[[nodiscard]] Outcome<CheckedInput> LoadVerified(const std::string& file, const Reporting& how,
                                                 std::string text = {});

// Plans a verified manifest and checks the plan with the independent checker (exit 4 when
// it finds a violation, printed as "<who>: internal error: ...").
[[nodiscard]] Outcome<simulator::LoadPlan> PlanChecked(const verifier::VerifiedManifest& manifest,
                                                       const simulator::PlanOptions& options,
                                                       std::string_view who);

// Both: the verified input and its checked plan.
struct PlannedInput {
  CheckedInput input;
  simulator::LoadPlan plan;
};
[[nodiscard]] Outcome<PlannedInput> LoadAndPlan(const std::string& file,
                                                const simulator::PlanOptions& options,
                                                const Reporting& how);

// Writes `text` to `path`; "-" is stdout (a command whose option defaults to "" passes "-").
// Errors (kIo): "cannot write to stdout", "cannot write <path>".
[[nodiscard]] base::Status WriteOutput(const std::string& path, const std::string& text);
// The end of every command: flushes std::cout and stdout and checks them, so output lost to
// a full disk (`> /dev/full`) or a closed stdout (`>&-`) is exit 2 and one line on stderr
// ("loadplan: cannot write to stdout: stdout is closed: the output is lost"), never exit 0. Returns
// `code`, or 2 when the output was lost and `code` was below 2.
[[nodiscard]] int FinishStdout(int code);

// The lower-case extension of `path` without the dot ("" when none).
[[nodiscard]] std::string Extension(const std::string& path);

}  // namespace loadplan::cli
