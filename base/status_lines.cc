// StatusFromLines / StatusLines: one status for all-at-once checks.
#include "base/status_lines.h"

namespace loadplan::base {

Status StatusFromLines(const std::vector<std::string>& problems, ErrorKind kind) {
  if (problems.empty()) return Status::Ok();
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "\n") + p;
  return Status::Error(std::move(text), kind).WithProblems(problems);
}

std::vector<std::string> StatusLines(const Status& status) {
  if (status.ok()) return {};
  if (!status.problems().empty()) return status.problems();  // the list, as it was made
  std::vector<std::string> lines;  // a status from elsewhere: its message's lines
  std::string_view rest = status.message();
  for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
    lines.emplace_back(rest.substr(0, nl));
  }
  lines.emplace_back(rest);
  return lines;
}

}  // namespace loadplan::base
