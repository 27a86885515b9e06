// Binding variables to values from "VAR=VALUE" texts, checked against the manifest.
#include "verifier/bind_assignment.h"

#include <charconv>

#include <fmt/format.h>

namespace loadplan::verifier {
namespace {

// The problem with binding `name` to `value` given what is bound already, or empty.
std::string BindingProblem(const Manifest& m, const Assignment& bound, const std::string& name,
                           int64_t value) {
  const Variable* v = m.FindVar(name);
  if (v == nullptr) return fmt::format("no variable `{}` in the manifest", name);
  if (value < v->min || value > v->max) return fmt::format("outside [{}, {}]", v->min, v->max);
  if (const auto it = bound.find(name); it != bound.end()) {
    return fmt::format("`{}` is already bound (--at {}={})", name, name, it->second);
  }
  return {};
}

}  // namespace

base::Result<std::pair<std::string, int64_t>> ParseBinding(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return base::Status::Error("expected VAR=VALUE");
  int64_t value = 0;
  const char* begin = text.data() + eq + 1;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end)
    return base::Status::Error("VALUE must be an integer");
  return std::pair(std::string(text.substr(0, eq)), value);
}

base::Result<Assignment> BindAssignment(const Manifest& m, std::span<const std::string> texts) {
  Assignment at;
  for (const std::string& text : texts) {
    base::Result<std::pair<std::string, int64_t>> binding = ParseBinding(text);
    if (!binding.ok()) return binding.status().WithContext(text);
    const auto& [name, value] = *binding;
    if (std::string problem = BindingProblem(m, at, name, value); !problem.empty()) {
      return base::Status::Error(fmt::format("{}: {}", text, problem));
    }
    at.emplace(name, value);
  }
  return at;
}

}  // namespace loadplan::verifier
