// `loadplan graph`: verify, plan, and render the liveness graph (cli/render/graph.h).
#include "cli/cmd_graph.h"

#include <cstdio>

#include "cli/pipeline.h"
#include "cli/render/graph.h"

namespace loadplan::cli {

int RunGraph(const GraphOptions& options) {
  const std::string format = options.format.value_or(Extension(options.output));
  std::optional<render::GraphFormat> kind;
  if (format == "svg") kind = render::GraphFormat::kSvg;
  if (format == "dot" || format == "gv") kind = render::GraphFormat::kDot;
  if (!kind) {
    std::fprintf(stderr, "graph: cannot tell the format of '%s': use .svg or .dot (or --format)\n",
                 options.output.c_str());
    return 2;
  }
  Outcome<PlannedInput> in = LoadAndPlan(options.file, options.plan, Reporting::ForRendering());
  if (!in.ok()) return in.exit_code();
  const simulator::LoadPlan& plan = in->plan;
  const base::Result<std::string> r = render::RenderGraph(plan, *kind);
  if (!r.ok()) {
    std::fprintf(stderr, "graph: %s\n", r.status().message().c_str());
    return 2;
  }
  if (const base::Status written = WriteOutput(options.output, *r); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 2;
  }
  if (options.output != "-") {
    std::fprintf(stderr, "wrote %s: %zu derive calls, %zu buffers\n", options.output.c_str(),
                 plan.calls.size(), plan.buffers.size());
  }
  return 0;
}

}  // namespace loadplan::cli
