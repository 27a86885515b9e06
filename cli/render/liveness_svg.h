// The liveness view (`loadplan graph -o x.svg`, the default view; docs/rendering.md): every
// buffer a bar over its window on the plan's clock, plus a serve column, rows grouped by
// layer (render/liveness_rows.h), collapsed into one row per layer for big manifests.
//
//   title: manifest, calls, lanes, prefetch, arena (lower bound), resident pool
//   peak line: each phase's maximum as `plan` reports it, the largest one marked
//   widest moment: <rect class="widest"> over its clock time, <text class="widest-label">
//                  with its time, call, bytes and the live sources by name
//   rows: <text class="row-label">, bars <rect class="bar <kind>"> with tooltips; sources
//         coloured by lane (their arena offset written in the row, and in collapsed rows
//         drawn as the bar's height in the arena), resident buffers and serve buffers by kind
//   axes: the plan's clock (derive call t) and the serve column
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "cli/render/liveness_rows.h"
#include "simulator/plan.h"

namespace loadplan::render {

// A phase's maximum as `plan` reports it (simulator/phases.h), for the peak line.
struct PhaseMark {
  std::string name;  // "load", "once", "serve"
  uint64_t bytes = 0;
  std::string at;  // the point where it is reached ("batch=256, ctx=131072"), or empty
  bool operator==(const PhaseMark&) const = default;
};

struct LivenessOptions {
  RowMode rows = RowMode::kAuto;
  std::vector<PhaseMark> phases;  // empty: no peak line
};

// Width 1600; height grows with the rows (kMaxBufferRows buffer rows or one per layer keep
// a 36-layer model on one screen). kInvalidInput when a byte sum overflows.
base::Result<std::string> RenderLivenessSvg(const simulator::LoadPlan& plan,
                                            const LivenessOptions& options);

}  // namespace loadplan::render
