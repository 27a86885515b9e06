// A host allocation of the host backend (the resident pool or the staging arena) with its
// shadow: one byte per byte, 1 where a fill or a derive call wrote it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>

namespace loadplan::backend {

struct HostRegion {
  std::unique_ptr<uint8_t[]> bytes;    // null when size == 0
  std::unique_ptr<uint8_t[]> written;  // the shadow
  uint64_t size = 0;

  // [offset, offset + n) lies inside the region (no overflow).
  [[nodiscard]] bool Holds(uint64_t offset, uint64_t n) const {
    return offset <= size && n <= size - offset;
  }
  // Precondition: Holds(offset, n).
  void Mark(uint64_t offset, uint64_t n, bool w) {
    if (n > 0) std::memset(written.get() + offset, w ? 1 : 0, n);
  }
  // The first unwritten byte of [offset, offset + n), relative to `offset`. Precondition: Holds.
  [[nodiscard]] std::optional<uint64_t> FirstUnwritten(uint64_t offset, uint64_t n) const {
    if (n == 0) return std::nullopt;
    const void* p = std::memchr(written.get() + offset, 0, n);
    if (!p) return std::nullopt;
    return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - (written.get() + offset));
  }
};

// The intersection of [a, a + an) and [b, b + bn) as (begin, length); length 0 when disjoint.
// Ends saturate instead of wrapping.
inline std::pair<uint64_t, uint64_t> Intersect(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  auto end = [](uint64_t o, uint64_t n) {
    uint64_t e = 0;
    return __builtin_add_overflow(o, n, &e) ? UINT64_MAX : e;
  };
  const uint64_t begin = a > b ? a : b;
  const uint64_t ea = end(a, an), eb = end(b, bn);
  const uint64_t stop = ea < eb ? ea : eb;
  return begin < stop ? std::pair{begin, stop - begin} : std::pair{begin, uint64_t{0}};
}

}  // namespace loadplan::backend
