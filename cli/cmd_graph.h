// `loadplan graph`: the liveness graph of a manifest's load plan as SVG or DOT (Graphviz).
#pragma once

#include <optional>
#include <string>

#include "simulator/plan.h"
#include "simulator/planner/planner.h"

namespace loadplan::cli {

struct GraphOptions {
  std::string file;                   // manifest; empty: the embedded gpt-oss-120b example
  std::string output;                 // out.svg | out.dot (or .gv); "-": stdout
  std::optional<std::string> format;  // "svg" | "dot": overrides the output's extension
  simulator::PlanOptions plan;        // --lanes, --prefetch, --placement
};

// Exit code: 0 written, 1 the manifest has verification errors (printed on stderr),
// 2 unreadable input, unknown format, or a rendering/writing failure.
int RunGraph(const GraphOptions& options);

}  // namespace loadplan::cli
