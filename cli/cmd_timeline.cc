// `loadplan timeline`: verify, plan, and render the SVG (or PNG) timeline or the Chrome trace.
#include "cli/cmd_timeline.h"

#include <cstdio>

#include "cli/pipeline.h"
#include "cli/render/chrome_trace.h"
#include "cli/render/png.h"
#include "cli/render/timeline_svg.h"

namespace loadplan::cli {

int RunTimeline(const TimelineOptions& options) {
  const std::string format = options.format.value_or(Extension(options.output));
  if (format != "svg" && format != "png" && format != "json") {
    std::fprintf(stderr,
                 "timeline: cannot tell the format of '%s': use .svg, .png or .json (or "
                 "--format)\n",
                 options.output.c_str());
    return 2;
  }
  Outcome<PlannedInput> in = LoadAndPlan(options.file, options.plan, Reporting::ForRendering());
  if (!in.ok()) return in.exit_code();
  const simulator::LoadPlan& plan = in->plan;
  base::Result<std::string> r =
      format == "json" ? render::RenderChromeTrace(plan) : render::RenderTimelineSvg(plan);
  if (r.ok() && format == "png") r = render::SvgToPng(*r);
  if (!r.ok()) {
    std::fprintf(stderr, "timeline: %s\n", r.status().message().c_str());
    return 2;
  }
  if (const base::Status written = WriteOutput(options.output, *r); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 2;
  }
  if (options.output != "-") {
    std::fprintf(stderr, "wrote %s: %zu derive calls, arena %llu bytes (lower bound %llu)\n",
                 options.output.c_str(), plan.calls.size(),
                 static_cast<unsigned long long>(plan.arena_bytes),
                 static_cast<unsigned long long>(plan.lower_bound));
  }
  return 0;
}

}  // namespace loadplan::cli
