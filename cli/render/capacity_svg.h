// The capacity picture (`loadplan plan --device-memory X --svg cap.svg`, docs/capacity.md): the
// peak as a function of the two main variables as a heat map, the fit frontier drawn on it.
//
//   y (batch, log2 when the range spans powers of two)
//   ^  cells: the peak at the cell's centre point, green shades up to the budget (darker =
//   |         closer to it), orange to red beyond it (2x, 4x, 8x the budget)
//   |  <circle class="frontier-point">: each ladder row's limit (table 0: the largest y at a
//   |         ladder x, labelled; table 1: the largest x at a ladder y), with data-* attributes
//   |         naming the values exactly as `plan --format json` reports them
//   |  <polyline class="frontier">: table 0's points joined (the device's line)
//   +----------------------------------------> x (ctx)
//
// Plain SVG text (SvgWriter). PNG: another helper's converter turns this SVG into PNG; this
// file only writes SVG (the hook: RenderCapacitySvg's string).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "simulator/capacity/frontier.h"
#include "simulator/capacity/peak_model.h"

namespace loadplan::render {

// `f` must come from ComputeFrontier(m). kInvalidInput when the model has fewer than two
// variables (nothing to map). O(cells x phases) evaluations, 40 x 30 cells at most.
base::Result<std::string> RenderCapacitySvg(const simulator::capacity::PeakModel& m,
                                            const simulator::capacity::Frontier& f,
                                            std::string_view title);

}  // namespace loadplan::render
