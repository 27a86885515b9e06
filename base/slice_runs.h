// The byte runs a slice of a tensor reads: a slice along dimension `dim` of a row-major tensor
// is `count` runs of `run_bytes`, the first at `first` bytes into the tensor, each `stride`
// bytes after the one before (dim 0: one run). Pure arithmetic, shared by the load's preflight,
// both backends' fills and the tests (docs/manifest.md, "Slices").
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/dtype.h"
#include "base/status.h"

namespace loadplan::base {

struct SliceRuns {
  uint64_t first = 0;      // bytes into the tensor of the first run
  uint64_t run_bytes = 0;  // each run's bytes
  uint64_t count = 0;      // runs
  uint64_t stride = 0;     // bytes from one run's start to the next's (0 when count is 1)
  [[nodiscard]] uint64_t bytes() const { return run_bytes * count; }
  // Bytes from the first run's start to the last run's end: what one covering read takes.
  [[nodiscard]] uint64_t span() const { return count == 0 ? 0 : (count - 1) * stride + run_bytes; }
  bool operator==(const SliceRuns&) const = default;
};

// The runs of elements [start, start + length) of dimension `dim` of a tensor of `shape` and
// `dtype`, every other dimension whole. kInvalidInput when `dim` is not a dimension, the range
// is empty or not inside it, a run does not start and end on whole bytes, or a figure
// overflows 64 bits.
[[nodiscard]] Result<SliceRuns> RunsOfSlice(std::span<const uint64_t> shape, Dtype dtype,
                                            uint64_t dim, uint64_t start, uint64_t length);

}  // namespace loadplan::base
