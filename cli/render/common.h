// Shared pieces of the renderers: text escaping, byte formatting,
// kind colours and the plan's memory series (what is live at each clock time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/bytes.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::render {

// Escapes &, <, >, " and ' for XML text and attribute values. Control characters
// other than tab and newline (not allowed in XML 1.0) become a visible "\xNN".
std::string XmlEscape(std::string_view s);

// "12.50 MiB", "1.10 GiB", "512 B": binary units (2^20, 2^30), the one byte format of base/bytes.h.
inline std::string FormatBytes(uint64_t bytes) { return base::FormatBytesAuto(bytes); }

// Lower-case kind name ("weight", "source", ...) and its fill colour (#rrggbb).
std::string_view KindName(verifier::BufferKind kind);
std::string_view KindColour(verifier::BufferKind kind);

// A colour per load lane, cycling through a fixed palette.
std::string_view LaneColour(uint32_t lane);

// Memory of a plan over its clock. Resident bytes are constant over the load;
// staged (arena) bytes are the sum of the sources live at t (window_begin <= t < window_end).
struct MemorySeries {
  uint64_t weight_bytes = 0;          // resident buffers of kind weight
  uint64_t carry_bytes = 0;           // other resident buffers (carries)
  std::vector<uint64_t> arena_live;   // one entry per clock time (plan.calls.size())
  uint64_t peak_arena_live = 0;
};
// Sums with checked 64-bit arithmetic; nullopt on overflow. O(buffers x calls).
std::optional<MemorySeries> ComputeMemorySeries(const simulator::LoadPlan& plan);

// The staged buffers (Residence::kStaged) of a plan, in arrival order when the plan
// lists one, otherwise in buffer order.
std::vector<simulator::BufferId> StagedBuffers(const simulator::LoadPlan& plan);

// "<program>#<index>" for a call of the clock.
std::string CallLabel(const simulator::PlannedCall& call);

}  // namespace loadplan::render
