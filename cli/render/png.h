// PNG output: an SVG the renderers wrote, rasterised by librsvg into a cairo image surface.
//
// librsvg (Debian librsvg2-2, ~50 shared libraries with cairo, pango and glib) is loaded at
// run time with dlopen on the first PNG asked for, not linked: the `loadplan` binary that
// scripts/gpu/gpu-pack ships to the GPU machine carries no part of it, and a machine without it
// gets a clear error for PNG while SVG, DOT and JSON work.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace loadplan::render {

// The PNG bytes of `svg` at its intrinsic size times `scale` (1: one pixel per SVG px).
// Errors (kIo): librsvg not installed (the message names the Debian package), the SVG
// rejected by librsvg (its message), a surface beyond 16384 pixels a side.
base::Result<std::string> SvgToPng(std::string_view svg, double scale = 1.0);

}  // namespace loadplan::render
