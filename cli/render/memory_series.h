// A plan's memory over its clock, as the timeline and trace renderers draw it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simulator/plan.h"

namespace loadplan::render {

// Memory of a plan over its clock. Resident bytes are constant over the load;
// staged (arena) bytes are the sum of the sources live at t (window_begin <= t < window_end).
struct MemorySeries {
  uint64_t weight_bytes = 0;         // resident buffers of kind weight
  uint64_t carry_bytes = 0;          // other resident buffers (carries)
  std::vector<uint64_t> arena_live;  // one entry per clock time (plan.calls.size())
  uint64_t peak_arena_live = 0;
};
// Sums with checked 64-bit arithmetic; nullopt on overflow. O(buffers x calls).
std::optional<MemorySeries> ComputeMemorySeries(const simulator::LoadPlan& plan);

// The staged buffers (Residence::kStaged) of a plan, in arrival order when the plan
// lists one, otherwise in buffer order.
std::vector<simulator::BufferId> StagedBuffers(const simulator::LoadPlan& plan);

// "<program>#<index>": a call of the clock as the renderers label it.
inline std::string CallLabel(const simulator::PlannedCall& call) {
  return fmt::format("{}#{}", call.program, call.call_in_program);
}

}  // namespace loadplan::render
