// Box helpers for the searches: sample points and bisection.
#include <optional>
#include <utility>
#include <vector>

#include "expr/search.h"

namespace loadplan::expr::detail {
namespace {

Assignment Corner(const Box& box, bool high) {
  Assignment a;
  for (const auto& [name, r] : box) a[name] = high ? r.max : r.min;
  return a;
}

int64_t Mid(const Range& r) {
  return static_cast<int64_t>(Wide{r.min} + (Wide{r.max} - Wide{r.min}) / 2);
}

std::vector<std::string> FreeVariables(const Box& box) {
  std::vector<std::string> out;
  for (const auto& [name, r] : box) {
    if (r.min < r.max) out.push_back(name);
  }
  return out;
}

void AddUnique(std::vector<Assignment>& out, Assignment a) {
  for (const Assignment& b : out) {
    if (b == a) return;
  }
  out.push_back(std::move(a));
}

}  // namespace

bool IsPoint(const Box& box) { return FreeVariables(box).empty(); }

std::vector<Assignment> SamplePoints(const Box& box, bool all_corners) {
  std::vector<Assignment> out;
  Assignment lo = Corner(box, false), hi = Corner(box, true), mid;
  for (const auto& [name, r] : box) mid[name] = Mid(r);
  AddUnique(out, lo);
  AddUnique(out, hi);
  AddUnique(out, mid);
  if (!all_corners) return out;
  std::vector<std::string> free = FreeVariables(box);
  if (free.size() <= 6) {
    for (uint32_t mask = 1; mask + 1 < (1u << free.size()); ++mask) {
      Assignment a = lo;
      for (size_t i = 0; i < free.size(); ++i) {
        if (mask & (1u << i)) a[free[i]] = box.at(free[i]).max;
      }
      AddUnique(out, std::move(a));
    }
    return out;
  }
  for (const std::string& v : free) {
    Assignment up = lo, down = hi;
    up[v] = box.at(v).max;
    down[v] = box.at(v).min;
    out.push_back(std::move(up));
    out.push_back(std::move(down));
  }
  return out;
}

std::optional<std::pair<Box, Box>> Split(const Box& box) {
  const std::string* widest = nullptr;
  Wide width = 0;
  for (const auto& [name, r] : box) {
    Wide w = Wide{r.max} - Wide{r.min};
    if (w > width) {
      width = w;
      widest = &name;
    }
  }
  if (!widest) return std::nullopt;
  Box lo = box, hi = box;
  int64_t mid = Mid(box.at(*widest));
  lo[*widest].max = mid;
  hi[*widest].min = mid + 1;
  return std::make_pair(std::move(lo), std::move(hi));
}

}  // namespace loadplan::expr::detail
