// Placement problem basics: policy names, lower bound, validation, height.
#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator {
namespace {

using placement_internal::AlignmentOf;
using placement_internal::Occupies;
using placement_internal::RoundUp;

constexpr std::array<std::pair<PlacementPolicy, std::string_view>, 4> kPolicyNames = {{
    {PlacementPolicy::kFirstFit, "first-fit"},
    {PlacementPolicy::kBestFit, "best-fit"},
    {PlacementPolicy::kExact, "exact"},
    {PlacementPolicy::kBest, "best"},
}};

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

}  // namespace

std::string_view PlacementPolicyName(PlacementPolicy policy) {
  for (const auto& [p, name] : kPolicyNames) {
    if (p == policy) return name;
  }
  return "unknown";
}

std::optional<PlacementPolicy> ParsePlacementPolicy(std::string_view name) {
  for (const auto& [p, n] : kPolicyNames) {
    if (n == name) return p;
  }
  return std::nullopt;
}

uint64_t LowerBound(const PlacementProblem& problem) {
  const uint64_t align = AlignmentOf(problem);
  // (time, delta kind): ends (0) sort before starts (1) at equal times: lifetimes are half-open.
  struct Event {
    int64_t time;
    int kind;
    uint64_t size;
  };
  std::vector<Event> events;
  events.reserve(problem.buffers.size() * 2);
  for (const PlacementBuffer& b : problem.buffers) {
    if (!Occupies(b)) continue;
    const uint64_t size = RoundUp(b.size, align);
    events.push_back({b.lower, 1, size});
    events.push_back({b.upper, 0, size});
  }
  std::sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
    return std::pair(x.time, x.kind) < std::pair(y.time, y.kind);
  });
  uint64_t live = 0;
  uint64_t best = 0;
  for (const Event& e : events) {
    live = e.kind == 1 ? SaturatingAdd(live, e.size) : live - e.size;
    best = std::max(best, live);
  }
  return best;
}

base::Status ValidateProblem(const PlacementProblem& problem) {
  const uint64_t align = AlignmentOf(problem);
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  uint64_t total = 0;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const PlacementBuffer& b = problem.buffers[i];
    if (b.size > kLimit || align > kLimit) {
      return base::Status::Error(
          fmt::format("buffer '{}': size {} or alignment {} exceeds 2^62", b.id, b.size, align));
    }
    total += RoundUp(b.size, align);
    if (total > kLimit) {
      return base::Status::Error(
          fmt::format("total of rounded sizes exceeds 2^62 at buffer '{}'", b.id));
    }
  }
  return base::Status::Ok();
}

uint64_t PlacementHeight(const PlacementProblem& problem, const std::vector<uint64_t>& offsets) {
  const uint64_t align = AlignmentOf(problem);
  uint64_t height = 0;
  for (size_t i = 0; i < problem.buffers.size() && i < offsets.size(); ++i) {
    const PlacementBuffer& b = problem.buffers[i];
    if (!Occupies(b)) continue;
    height = std::max(height, SaturatingAdd(offsets[i], RoundUp(b.size, align)));
  }
  return height;
}

}  // namespace loadplan::simulator
