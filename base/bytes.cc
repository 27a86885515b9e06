// Checked byte arithmetic, tensor sizes and byte formats.
#include "base/bytes.h"

#include <fmt/format.h>

namespace loadplan::base {

std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

uint64_t AddSat(uint64_t a, uint64_t b) { return CheckedAdd(a, b).value_or(UINT64_MAX); }
uint64_t MulSat(uint64_t a, uint64_t b) { return CheckedMul(a, b).value_or(UINT64_MAX); }

std::optional<uint64_t> ElementBytes(uint64_t elements, Dtype dtype) {
  const auto bits = CheckedMul(elements, DtypeBits(dtype));
  if (!bits) return std::nullopt;
  return *bits / 8 + (*bits % 8 != 0);
}

std::optional<uint64_t> TensorBytes(Dtype dtype, std::span<const uint64_t> shape) {
  uint64_t elements = 1;
  for (const uint64_t d : shape) {
    const auto next = CheckedMul(elements, d);
    if (!next) return std::nullopt;
    elements = *next;
  }
  return ElementBytes(elements, dtype);
}

std::optional<uint64_t> TensorBytes(Dtype dtype, std::span<const int64_t> shape) {
  uint64_t elements = 1;
  for (const int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const auto next = CheckedMul(elements, static_cast<uint64_t>(d));
    if (!next) return std::nullopt;
    elements = *next;
  }
  return ElementBytes(elements, dtype);
}

double ToGiB(uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(uint64_t{1} << 30);
}

std::string FormatGiB(uint64_t bytes, int decimals) {
  return fmt::format("{:.{}f} GiB", ToGiB(bytes), decimals);
}

std::string FormatGiBExact(uint64_t bytes, int decimals, std::string_view unit) {
  return fmt::format("{:.{}f} GiB ({} {})", ToGiB(bytes), decimals, bytes, unit);
}

std::string FormatBytesAuto(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0;
  if (bytes >= (uint64_t{1} << 30)) return FormatGiB(bytes);
  if (bytes >= (uint64_t{1} << 20))
    return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / kMiB);
  if (bytes >= (uint64_t{1} << 10))
    return fmt::format("{:.2f} KiB", static_cast<double>(bytes) / kKiB);
  return fmt::format("{} B", bytes);
}

std::string FormatBytesOrGiB(uint64_t bytes, uint64_t plain_below) {
  if (bytes < plain_below) return fmt::format("{} B", bytes);
  return FormatGiB(bytes);
}

}  // namespace loadplan::base
