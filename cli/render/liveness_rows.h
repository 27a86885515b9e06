// The liveness view's model (`loadplan graph`, the default view): every buffer the load or
// serving allocates as a bar on the plan's clock, in rows grouped by layer.
//
// Slots: the load's clock times 0 .. E-1 (E = LoadClockEnd: every call and every window fits),
// then one slot E for the serve phase. A buffer's bar covers the half-open slot range
//   source (staged)        [window_begin, window_end)     in the arena, at its offset
//   weight, carry          [0, E + 1)                     the resident pool, load and serve
//   state, scratch, I/O    [E, E + 1)                     allocated after the load
// Peer buffers (other devices) and skipped sources (never loaded) get no bar.
//
// Groups: a buffer's layer is its name up to and including the first dot-separated part
// that ends in a digit ("l3.fc1_w" -> "l3", "model.layers.12.mlp.x" -> "model.layers.12");
// names without one form the group "model" (embeddings, final norm, I/O). Groups are
// ordered by their layer number (natural order), "model" first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/phases/phases.h"
#include "simulator/plan.h"

namespace loadplan::render {

inline constexpr std::string_view kSharedGroup = "model";

// A buffer's bar: slots [begin, end).
struct LiveBar {
  simulator::BufferId buffer{};
  uint32_t begin = 0, end = 0;
  bool operator==(const LiveBar&) const = default;
};

// One row: a buffer (members.size() == 1 when not collapsed) or a whole group.
struct LiveRow {
  std::string label;  // the buffer's name, or the group's
  std::string group;
  std::vector<LiveBar> bars;    // the members' bars, in row order
  uint64_t bytes = 0;           // the members' bytes (serve buffers: the maximum over the box)
  bool live_at_widest = false;  // a member is a source live at the widest moment
  bool operator==(const LiveRow&) const = default;
};

enum class RowMode { kAuto, kBuffers, kGroups };

struct LiveModel {
  uint32_t clock_end = 1;  // E: the serve slot's index
  bool collapsed = false;  // one row per group
  std::vector<LiveRow> rows;
  std::optional<simulator::WidestMoment> widest;
};

// kAuto collapses when there are more than `max_rows` buffer rows. nullopt when a byte sum
// overflows 64 bits.
inline constexpr size_t kMaxBufferRows = 64;
std::optional<LiveModel> BuildLiveModel(const simulator::LoadPlan& plan, RowMode mode,
                                        size_t max_rows = kMaxBufferRows);

// The layer group of a buffer name (see above).
std::string LayerGroup(std::string_view name);

// The end of the load clock: every call and every window fits in [0, end); at least 1.
uint32_t LoadClockEnd(const simulator::LoadPlan& plan);

}  // namespace loadplan::render
