// Placement checker: validates offsets of buffers with half-open lifetimes (no planner needed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/placement/placement.h"  // the problem and placement types only (no planner code)

namespace loadplan::simulator {

// One placed buffer as the checker sees it: live at times lower <= t < upper, occupying bytes
// [offset, offset + size). Buffers with an empty lifetime or size 0 occupy nothing.
struct PlacedBuffer {
  std::string id;
  int64_t lower = 0;
  int64_t upper = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
  bool operator==(const PlacedBuffer&) const = default;
};

enum class PlacementViolationKind {
  kOverlap,        // two buffers live at the same time share bytes
  kMisaligned,     // offset is not a multiple of the alignment
  kExceedsHeight,  // offset + size is above the arena height (or overflows)
};

struct PlacementViolation {
  PlacementViolationKind kind = PlacementViolationKind::kOverlap;
  size_t first = 0;              // index into the checked buffers
  std::optional<size_t> second;  // the other buffer of an overlap
  std::string message;           // names the ids
  bool operator==(const PlacementViolation&) const = default;
};

struct PlacementCheckOptions {
  uint64_t height = 0;           // arena size in bytes
  uint64_t alignment = 1;        // 0 is read as 1
  size_t max_violations = 1000;  // stop collecting after this many
};

// All violations (up to max_violations), sorted by kind, then buffer indices. Runs a sweep over
// time with a max-segment tree over offsets: O(n log n + k log n) for k reported overlaps.
std::vector<PlacementViolation> CheckPlacement(const std::vector<PlacedBuffer>& buffers,
                                               const PlacementCheckOptions& options);

// A placer's answer checked as above: buffer i of `problem` at placement.offsets[i] (UINT64_MAX
// where it has none), its size rounded up to the problem's alignment as Place rounds it, under
// the placement's height.
std::vector<PlacementViolation> CheckPlacement(const PlacementProblem& problem,
                                               const Placement& placement,
                                               size_t max_violations = 1000);

}  // namespace loadplan::simulator
