// Static data of the exact search: sections (compressed times), members, overlaps.
#include <algorithm>
#include <chrono>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator::placement_internal {
namespace {

void BuildOverlaps(ExactInstance& inst) {
  const size_t n = inst.global.size();
  std::vector<Idx> order(n);
  for (Idx i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](Idx a, Idx b) { return inst.sec_lo[a] < inst.sec_lo[b]; });
  inst.overlaps.assign(n, {});
  std::vector<Idx> active;
  for (const Idx b : order) {
    std::erase_if(active, [&](Idx a) { return inst.sec_hi[a] <= inst.sec_lo[b]; });
    for (const Idx a : active) {
      inst.overlaps[a].push_back(b);
      inst.overlaps[b].push_back(a);
    }
    active.push_back(b);
  }
}

}  // namespace

ExactInstance BuildExactInstance(const PlacementProblem& problem) {
  ExactInstance inst;
  const uint64_t align = AlignmentOf(problem);
  std::vector<int64_t> times;
  for (Idx i = 0; i < problem.buffers.size(); ++i) {
    const PlacementBuffer& b = problem.buffers[i];
    if (!Occupies(b)) continue;
    inst.global.push_back(i);
    inst.size.push_back(RoundUp(b.size, align));
    inst.length.push_back(b.upper - b.lower);
    times.push_back(b.lower);
    times.push_back(b.upper);
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  auto index = [&](int64_t t) {
    return static_cast<uint32_t>(std::lower_bound(times.begin(), times.end(), t) - times.begin());
  };
  inst.members.assign(times.empty() ? 0 : times.size() - 1, {});
  for (Idx l = 0; l < inst.global.size(); ++l) {
    const PlacementBuffer& b = problem.buffers[inst.global[l]];
    inst.sec_lo.push_back(index(b.lower));
    inst.sec_hi.push_back(index(b.upper));
    for (uint32_t s = inst.sec_lo[l]; s < inst.sec_hi[l]; ++s) inst.members[s].push_back(l);
  }
  BuildOverlaps(inst);
  return inst;
}

double SteadySeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace loadplan::simulator::placement_internal
