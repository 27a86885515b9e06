// The SVG memory timeline of a load plan (written as plain SVG text, no Graphviz).
//
// Top panel: device memory over the plan's clock, stacked by kind: weights, carries
// (the resident pool, constant during the load) and the staging arena's live bytes at
// each derive call t (sources whose window [b, e) contains t); dashed lines mark
// resident + arena size and resident + lower bound. Bottom panel: the staging arena as
// time x offset, one <rect class="source"> per staged source spanning its window
// horizontally and [offset, offset + bytes) vertically, coloured by lane, with a <title>
// tooltip (name, window, lane, bytes, offset); lines at the arena size and the lower
// bound. Axes: bytes in GiB (2^30), time in derive-call indices.
#pragma once

#include "base/status.h"
#include "simulator/plan.h"
#include "simulator/plan.h"

namespace loadplan::render {

// O(buffers x calls). Fails only on a byte sum that overflows 64 bits.
base::Result<std::string> RenderTimelineSvg(const simulator::LoadPlan& plan);

}  // namespace loadplan::render
