// Placement checker: sweep over time, max-segment tree over buffers ordered by offset.
#include "simulator/check/placement_check.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

namespace loadplan::simulator {
namespace {

bool Occupies(const PlacedBuffer& b) { return b.lower < b.upper && b.size > 0; }

uint64_t EndOf(const PlacedBuffer& b) {
  uint64_t end = 0;
  return __builtin_add_overflow(b.offset, b.size, &end) ? std::numeric_limits<uint64_t>::max()
                                                        : end;
}

// Leaves are buffers sorted by offset; a leaf holds the buffer's end while it is live, else 0.
// Reports the live buffers in a prefix of leaves whose end exceeds a threshold.
class OffsetTree {
 public:
  explicit OffsetTree(size_t leaves) {
    while (size_ < leaves) size_ *= 2;
    max_.assign(2 * size_, 0);
  }
  void Set(size_t leaf, uint64_t value) {
    size_t node = leaf + size_;
    max_[node] = value;
    for (node /= 2; node >= 1; node /= 2) max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
  }
  // Appends leaves < limit with value > threshold, at most `room` of them.
  void Collect(size_t limit, uint64_t threshold, size_t room, std::vector<size_t>& out) const {
    Descend(1, 0, size_, limit, threshold, room, out);
  }

 private:
  void Descend(size_t node, size_t lo, size_t hi, size_t limit, uint64_t threshold, size_t room,
               std::vector<size_t>& out) const {
    if (lo >= limit || max_[node] <= threshold || out.size() >= room) return;
    if (hi - lo == 1) {
      out.push_back(lo);
      return;
    }
    const size_t mid = (lo + hi) / 2;
    Descend(2 * node, lo, mid, limit, threshold, room, out);
    Descend(2 * node + 1, mid, hi, limit, threshold, room, out);
  }

  size_t size_ = 1;
  std::vector<uint64_t> max_;
};

void CheckBounds(const std::vector<PlacedBuffer>& buffers, const PlacementCheckOptions& options,
                 std::vector<PlacementViolation>& out) {
  const uint64_t align = options.alignment == 0 ? 1 : options.alignment;
  for (size_t i = 0; i < buffers.size() && out.size() < options.max_violations; ++i) {
    const PlacedBuffer& b = buffers[i];
    if (b.offset % align != 0) {
      out.push_back(
          {PlacementViolationKind::kMisaligned, i, std::nullopt,
           fmt::format("buffer '{}': offset {} is not a multiple of {}", b.id, b.offset, align)});
    }
    uint64_t end = 0;
    if (Occupies(b) && (__builtin_add_overflow(b.offset, b.size, &end) || end > options.height)) {
      out.push_back({PlacementViolationKind::kExceedsHeight, i, std::nullopt,
                     fmt::format("buffer '{}': bytes [{}, {}+{}) exceed the arena height {}", b.id,
                                 b.offset, b.offset, b.size, options.height)});
    }
  }
}

PlacementViolation OverlapViolation(const std::vector<PlacedBuffer>& buffers, size_t a, size_t b) {
  const PlacedBuffer& x = buffers[std::min(a, b)];
  const PlacedBuffer& y = buffers[std::max(a, b)];
  return {PlacementViolationKind::kOverlap, std::min(a, b), std::max(a, b),
          fmt::format("buffers '{}' [{}, {}) bytes [{}, {}) and '{}' [{}, {}) bytes [{}, {}) "
                      "overlap in time and space",
                      x.id, x.lower, x.upper, x.offset, EndOf(x), y.id, y.lower, y.upper, y.offset,
                      EndOf(y))};
}

void CheckOverlaps(const std::vector<PlacedBuffer>& buffers, const PlacementCheckOptions& options,
                   std::vector<PlacementViolation>& out) {
  std::vector<size_t> by_offset;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (Occupies(buffers[i])) by_offset.push_back(i);
  }
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return std::pair(buffers[a].offset, a) < std::pair(buffers[b].offset, b);
  });
  std::vector<size_t> leaf(buffers.size(), 0);
  for (size_t p = 0; p < by_offset.size(); ++p) leaf[by_offset[p]] = p;
  // Events (time, 0 = end before 1 = start: lifetimes are half-open, buffer index).
  std::vector<std::tuple<int64_t, int, size_t>> events;
  for (const size_t i : by_offset) {
    events.emplace_back(buffers[i].lower, 1, i);
    events.emplace_back(buffers[i].upper, 0, i);
  }
  std::sort(events.begin(), events.end());
  OffsetTree tree(by_offset.size());
  std::vector<size_t> hits;
  for (const auto& [time, kind, i] : events) {
    if (kind == 0) {
      tree.Set(leaf[i], 0);
      continue;
    }
    const PlacedBuffer& y = buffers[i];
    // Live x overlaps y iff x.offset < end(y) and end(x) > y.offset.
    const auto limit = static_cast<size_t>(
        std::partition_point(by_offset.begin(), by_offset.end(),
                             [&](size_t j) { return buffers[j].offset < EndOf(y); }) -
        by_offset.begin());
    hits.clear();
    const size_t room =
        options.max_violations > out.size() ? options.max_violations - out.size() : 0;
    tree.Collect(limit, y.offset, room, hits);
    for (const size_t p : hits) out.push_back(OverlapViolation(buffers, by_offset[p], i));
    tree.Set(leaf[i], EndOf(y));
  }
}

}  // namespace

std::vector<PlacementViolation> CheckPlacement(const std::vector<PlacedBuffer>& buffers,
                                               const PlacementCheckOptions& options) {
  std::vector<PlacementViolation> out;
  CheckOverlaps(buffers, options, out);
  CheckBounds(buffers, options, out);
  if (out.size() > options.max_violations) out.resize(options.max_violations);
  std::sort(out.begin(), out.end(), [](const PlacementViolation& a, const PlacementViolation& b) {
    return std::tuple(a.kind, a.first, a.second) < std::tuple(b.kind, b.first, b.second);
  });
  return out;
}

std::vector<PlacementViolation> CheckPlacement(const PlacementProblem& problem,
                                               const Placement& placement, size_t max_violations) {
  const uint64_t align = std::max<uint64_t>(1, problem.alignment);
  std::vector<PlacedBuffer> placed;
  placed.reserve(problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const PlacementBuffer& b = problem.buffers[i];
    uint64_t size = std::numeric_limits<uint64_t>::max();
    if (b.size <= size - (align - 1)) size = (b.size + align - 1) / align * align;
    placed.push_back({.id = b.id,
                      .lower = b.lower,
                      .upper = b.upper,
                      .size = size,
                      .offset = i < placement.offsets.size()
                                    ? placement.offsets[i]
                                    : std::numeric_limits<uint64_t>::max()});
  }
  return CheckPlacement(
      placed, {.height = placement.height, .alignment = align, .max_violations = max_violations});
}

}  // namespace loadplan::simulator
