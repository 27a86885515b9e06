// A measured rate: bytes over the best time.
#pragma once

#include <cstdint>

namespace loadplan::backend {

struct Throughput {
  uint64_t bytes = 0;
  double seconds = 0;  // the best repetition (or, where a probe says so, a sum of rounds)
  [[nodiscard]] double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

}  // namespace loadplan::backend
