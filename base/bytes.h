// The bytes vocabulary of every layer: checked and saturating arithmetic on byte counts,
// rounding, tensor byte sizes from dtype x shape, and the byte formats the tools print.
// Units (docs/planner.md, "Units and conventions"): sizes in bytes, printed in GiB = 2^30
// bytes; bandwidth in GB/s = 10^9 bytes per second.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/dtype.h"

namespace loadplan::base {

// nullopt when the exact result does not fit 64 bits.
std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b);
std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b);
// The exact result, or UINT64_MAX when it does not fit (a checker then rejects the total).
uint64_t AddSat(uint64_t a, uint64_t b);
uint64_t MulSat(uint64_t a, uint64_t b);
// `bytes` rounded up to a multiple of `to` (0 or 1: unchanged), saturating at UINT64_MAX.
// Inline: the placement policies call it in their inner loops.
inline uint64_t RoundUp(uint64_t bytes, uint64_t to) {
  if (to <= 1) return bytes;
  const uint64_t rem = bytes % to;
  uint64_t out = 0;
  if (rem == 0) return bytes;
  return __builtin_add_overflow(bytes, to - rem, &out) ? UINT64_MAX : out;
}

// Bytes that `elements` of `dtype` occupy, rounded up to whole bytes (F4: two per byte);
// nullopt on overflow.
std::optional<uint64_t> ElementBytes(uint64_t elements, Dtype dtype);
// Bytes of a dense tensor of `shape` (every dimension non-negative; [] is one element);
// nullopt on overflow or a negative dimension.
std::optional<uint64_t> TensorBytes(Dtype dtype, std::span<const int64_t> shape);
std::optional<uint64_t> TensorBytes(Dtype dtype, std::span<const uint64_t> shape);

// Formats. GiB = bytes / 2^30.
double ToGiB(uint64_t bytes);
std::string FormatGiB(uint64_t bytes, int decimals = 2);  // "139.80 GiB"
// "1.10 GiB (1181116006 bytes)"; `unit` names the exact count's unit ("bytes", "B").
std::string FormatGiBExact(uint64_t bytes, int decimals = 2, std::string_view unit = "bytes");
std::string FormatBytesAuto(uint64_t bytes);  // "512 B", "3.00 KiB", "1.50 MiB", "2.25 GiB"
// Exact bytes below `plain_below` ("4096 B"), GiB from there on.
std::string FormatBytesOrGiB(uint64_t bytes, uint64_t plain_below);

}  // namespace loadplan::base
