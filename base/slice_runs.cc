// RunsOfSlice: a slice's byte runs in its tensor (slice_runs.h).
#include "base/slice_runs.h"

#include <fmt/format.h>

#include "base/bytes.h"

namespace loadplan::base {
namespace {

// bits as whole bytes, or nullopt when not whole.
std::optional<uint64_t> WholeBytes(std::optional<uint64_t> elements, uint32_t bits) {
  if (!elements) return std::nullopt;
  const std::optional<uint64_t> b = CheckedMul(*elements, bits);
  if (!b || *b % 8 != 0) return std::nullopt;
  return *b / 8;
}

}  // namespace

Result<SliceRuns> RunsOfSlice(std::span<const uint64_t> shape, Dtype dtype, uint64_t dim,
                              uint64_t start, uint64_t length) {
  if (dim >= shape.size()) {
    return Status::Error(fmt::format("slice along dimension {} of a tensor with {} dimension{}",
                                     dim, shape.size(), shape.size() == 1 ? "" : "s"));
  }
  if (length == 0 || start > shape[dim] || length > shape[dim] - start) {
    return Status::Error(fmt::format("slice [{}, {}) of dimension {} is not inside its extent {}",
                                     start, start + length, dim, shape[dim]));
  }
  std::optional<uint64_t> outer = 1, inner = 1;
  for (uint64_t d = 0; d < dim; ++d) outer = outer ? CheckedMul(*outer, shape[d]) : outer;
  for (uint64_t d = dim + 1; d < shape.size(); ++d)
    inner = inner ? CheckedMul(*inner, shape[d]) : inner;
  if (!outer || !inner) return Status::Error("the tensor's element count overflows 64 bits");
  const uint32_t bits = DtypeBits(dtype);
  const std::optional<uint64_t> first = WholeBytes(CheckedMul(start, *inner), bits);
  const std::optional<uint64_t> run = WholeBytes(CheckedMul(length, *inner), bits);
  const std::optional<uint64_t> row = WholeBytes(CheckedMul(shape[dim], *inner), bits);
  if (!first || !run || !row) {
    return Status::Error(fmt::format(
        "slice [{}, {}) of dimension {} does not start and end on whole bytes ({} bits per "
        "element, {} elements per index)",
        start, start + length, dim, bits, *inner));
  }
  if (!CheckedMul(*outer, *row)) return Status::Error("the tensor's byte count overflows 64 bits");
  return SliceRuns{
      .first = *first, .run_bytes = *run, .count = *outer, .stride = *outer > 1 ? *row : 0};
}

}  // namespace loadplan::base
