// The ladder: bounds, powers of two between them, and the user's --at values.
#include "simulator/capacity/ladder.h"

#include <algorithm>

namespace loadplan::simulator::capacity {

std::vector<int64_t> Ladder(verifier::Range r, std::span<const int64_t> extra) {
  std::vector<int64_t> out{r.min, r.max};
  for (int k = 0; k < 63; ++k) {
    const int64_t p = int64_t{1} << k;
    if (p > r.min && p < r.max) out.push_back(p);
  }
  for (const int64_t x : extra) {
    if (x >= r.min && x <= r.max) out.push_back(x);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace loadplan::simulator::capacity
