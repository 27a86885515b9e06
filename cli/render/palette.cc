// Kind and lane colours.
#include "cli/render/palette.h"

#include <array>

namespace loadplan::render {

std::string_view KindColour(verifier::BufferKind kind) {
  using K = verifier::BufferKind;
  switch (kind) {
    case K::kWeight: return "#9ecae1";   // blue
    case K::kSource: return "#fdae6b";   // orange
    case K::kCarry: return "#a1d99b";    // green
    case K::kState: return "#bcbddc";    // purple: the KV cache and other serve state
    case K::kScratch: return "#fcbba1";  // pink
    default: return "#d9d9d9";           // grey: inputs, outputs, peers
  }
}

std::string_view LaneColour(uint32_t lane) {
  static constexpr std::array<std::string_view, 8> kPalette{
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return kPalette[lane % kPalette.size()];
}

}  // namespace loadplan::render
