// `loadplan graph`: the liveness view of a manifest's load plan (SVG or PNG; the default), or
// the dataflow graph laid out by Graphviz (SVG, PNG or DOT).
#pragma once

#include <optional>
#include <string>

#include "simulator/plan.h"
#include "simulator/planner/planner.h"

namespace loadplan::cli {

struct GraphOptions {
  std::string file;                   // manifest; empty: the embedded gpt-oss-120b example
  std::string output;                 // out.svg | out.png | out.dot (or .gv); "-": stdout
  std::optional<std::string> format;  // "svg" | "png" | "dot": overrides the output's extension
  std::optional<std::string> view;    // "liveness" | "dataflow"; default: liveness (dot: dataflow)
  std::string rows = "auto";          // liveness rows: "auto" | "buffers" | "layers"
  simulator::PlanOptions plan;        // --lanes, --prefetch, --placement
};

// Exit code: 0 written, 1 the manifest has verification errors (printed on stderr),
// 2 unreadable input, unknown format or view, or a rendering/writing failure.
int RunGraph(const GraphOptions& options);

}  // namespace loadplan::cli
