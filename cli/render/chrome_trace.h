// The Chrome trace (Trace Event Format JSON, loadable in Perfetto / chrome://tracing) of a
// load plan.
//
// Time: "ts" and "dur" are in clock units, one unit per derive call; the format reads
// them as microseconds, so 1 unit shows as 1 µs (nominal: the plan has no durations).
// Tracks (pid 1): tid 0 "derive calls" holds one complete event ("ph": "X") per call
// [t, t + 1); each lane L has a track "lane L" with one complete event per staged
// source over its window [b, e). Perfetto drops complete events that overlap without
// nesting on one track, and the windows of one lane may overlap (prefetch, long-lived
// sources), so a lane whose windows overlap gets extra rows "lane L (overlap k)" —
// each row's events are disjoint. A counter "arena live" gives the live staged bytes.
// Metadata events ("ph": "M") name the process and every track.
#pragma once

#include "base/status.h"
#include "simulator/plan.h"
#include "simulator/plan.h"

namespace loadplan::render {

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}. Names that are not
// valid UTF-8 are written with U+FFFD replacements. O(buffers log buffers + calls).
base::Result<std::string> RenderChromeTrace(const simulator::LoadPlan& plan);

}  // namespace loadplan::render
