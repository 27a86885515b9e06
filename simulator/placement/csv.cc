// Placement problems as CSV (MiniMalloc's format): id,lower,upper,size[,...] and an offset column
// out.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "base/input_file.h"
#include "simulator/placement/placement.h"

namespace loadplan::simulator {
namespace {

constexpr uint64_t kCsvBytes = uint64_t{4} << 30;  // 10^6 buffers take about 40 MB

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

template <typename T>
std::optional<T> ParseInt(std::string_view s) {
  T value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Column positions; `inclusive_end` when the lifetime is given as start,end (end inclusive).
struct Columns {
  size_t id = 0, lower = 0, upper = 0, size = 0;
  bool inclusive_end = false;
  size_t needed = 0;  // fields a row must have
};

std::optional<Columns> ParseHeader(std::string_view line, std::vector<CsvError>& errors) {
  std::map<std::string_view, size_t> pos;
  const std::vector<std::string_view> fields = SplitFields(line);
  for (size_t i = 0; i < fields.size(); ++i) pos.emplace(fields[i], i);
  Columns c;
  c.inclusive_end = !pos.contains("lower") && !pos.contains("upper") && pos.contains("start") &&
                    pos.contains("end");
  const std::string_view names[4] = {"id", c.inclusive_end ? "start" : "lower",
                                     c.inclusive_end ? "end" : "upper", "size"};
  size_t* slots[4] = {&c.id, &c.lower, &c.upper, &c.size};
  bool ok = true;
  for (int k = 0; k < 4; ++k) {
    auto it = pos.find(names[k]);
    if (it == pos.end()) {
      errors.push_back({1, fmt::format("header lacks column '{}'", names[k])});
      ok = false;
      continue;
    }
    *slots[k] = it->second;
    c.needed = std::max(c.needed, it->second + 1);
  }
  return ok ? std::optional(c) : std::nullopt;
}

std::optional<PlacementBuffer> ParseRow(std::string_view line, int line_no, const Columns& c,
                                        std::vector<CsvError>& errors) {
  const std::vector<std::string_view> f = SplitFields(line);
  if (f.size() < c.needed) {
    errors.push_back({line_no, fmt::format("{} fields, need {}", f.size(), c.needed)});
    return std::nullopt;
  }
  const auto lower = ParseInt<int64_t>(f[c.lower]);
  auto upper = ParseInt<int64_t>(f[c.upper]);
  const auto size = ParseInt<uint64_t>(f[c.size]);
  if (!lower || !upper || !size) {
    const char* what = !lower ? "lower" : !upper ? "upper" : "size";
    errors.push_back({line_no, fmt::format("{} is not an integer in range", what)});
    return std::nullopt;
  }
  if (c.inclusive_end && *upper != INT64_MAX) *upper += 1;
  if (*lower >= *upper) {
    errors.push_back({line_no, fmt::format("empty lifetime [{}, {})", *lower, *upper)});
    return std::nullopt;
  }
  if (f[c.id].empty()) {
    errors.push_back({line_no, "empty id"});
    return std::nullopt;
  }
  return PlacementBuffer{
      .id = std::string(f[c.id]), .lower = *lower, .upper = *upper, .size = *size};
}

}  // namespace

CsvReadResult ReadPlacementCsv(std::string_view text) {
  CsvReadResult result;
  std::optional<Columns> columns;
  PlacementProblem problem;
  std::map<std::string, int> seen;  // id -> line
  int line_no = 0;
  bool header_seen = false;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    if (!header_seen) {
      header_seen = true;
      columns = ParseHeader(line, result.errors);
      if (!columns) return result;
      continue;
    }
    std::optional<PlacementBuffer> b = ParseRow(line, line_no, *columns, result.errors);
    if (!b) continue;
    if (auto [it, fresh] = seen.emplace(b->id, line_no); !fresh) {
      result.errors.push_back(
          {line_no, fmt::format("duplicate id '{}' (first on line {})", b->id, it->second)});
      continue;
    }
    problem.buffers.push_back(std::move(*b));
  }
  if (!header_seen) result.errors.push_back({1, "empty input: no header"});
  if (result.errors.empty()) result.problem = std::move(problem);
  return result;
}

CsvReadResult ReadPlacementCsvFile(const std::string& path) {
  base::Result<std::string> text = base::ReadInputFile(path, kCsvBytes, "placement CSV");
  if (!text.ok()) return {.problem = std::nullopt, .errors = {{0, text.status().message()}}};
  return ReadPlacementCsv(*text);
}

std::string WritePlacementCsv(const PlacementProblem& problem, const Placement& placement) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const PlacementBuffer& b = problem.buffers[i];
    const uint64_t offset = i < placement.offsets.size() ? placement.offsets[i] : 0;
    out += fmt::format("{},{},{},{},{}\n", b.id, b.lower, b.upper, b.size, offset);
  }
  return out;
}

}  // namespace loadplan::simulator
