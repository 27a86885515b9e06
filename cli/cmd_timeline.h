// `loadplan timeline`: the memory timeline of a manifest's load plan as SVG, or as a
// Chrome trace (Trace Event Format JSON, for Perfetto / chrome://tracing).
#pragma once

#include <optional>
#include <string>

#include "simulator/planner/planner.h"

namespace loadplan::cli {

struct TimelineOptions {
  std::string file;                   // manifest; empty: the embedded gpt-oss-120b example
  std::string output;                 // out.svg | out.png | out.json; "-": stdout
  std::optional<std::string> format;  // "svg" | "png" | "json": overrides the extension
  simulator::PlanOptions plan;        // --lanes, --prefetch, --placement
};

// Exit code: 0 written, 1 the manifest has verification errors (printed on stderr),
// 2 unreadable input, unknown format, or a rendering/writing failure.
int RunTimeline(const TimelineOptions& options);

}  // namespace loadplan::cli
