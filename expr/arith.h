// Checked int64 arithmetic and floor/ceil division shared by evaluation and interval bounds.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace loadplan::expr::detail {

using Wide = __int128;

inline constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

inline bool FitsI64(Wide v) { return v >= kI64Min && v <= kI64Max; }

inline std::optional<int64_t> Narrow(Wide v) {
  if (!FitsI64(v)) return std::nullopt;
  return static_cast<int64_t>(v);
}

inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Floor quotient / remainder and ceiling quotient on 128-bit values; b != 0.
// The remainder takes the sign of the divisor (a == b * FloorDiv(a, b) + FloorMod(a, b)).
inline Wide FloorDivW(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
inline Wide FloorModW(Wide a, Wide b) { return a - b * FloorDivW(a, b); }
inline Wide CeilDivW(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  return q;
}

}  // namespace loadplan::expr::detail
