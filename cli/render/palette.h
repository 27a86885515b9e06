// The renderers' colours: one per buffer kind (the graph's nodes, the timeline's bars)
// and one per load lane.
#pragma once

#include <cstdint>
#include <string_view>

#include "verifier/manifest.h"

namespace loadplan::render {

// Fill colour (#rrggbb) of a buffer kind: weight blue, source orange, carry green, state
// purple, scratch pink, the rest grey.
std::string_view KindColour(verifier::BufferKind kind);

// A colour per load lane, cycling through a fixed palette.
std::string_view LaneColour(uint32_t lane);

}  // namespace loadplan::render
