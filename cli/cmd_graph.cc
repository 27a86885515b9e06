// `loadplan graph`: verify, plan, and render the liveness view (cli/render/liveness_svg.h) or
// the dataflow graph (cli/render/graph.h); PNG through cli/render/png.h.
#include "cli/cmd_graph.h"

#include <cstdio>

#include "cli/pipeline.h"
#include "cli/render/graph.h"
#include "cli/render/liveness_svg.h"
#include "cli/render/png.h"
#include "simulator/phases/phases.h"

namespace loadplan::cli {
namespace {

struct Choice {
  std::string format;  // svg | png | dot
  bool liveness = true;
  render::RowMode rows = render::RowMode::kAuto;
};

std::optional<Choice> Choose(const GraphOptions& o) {
  Choice c{.format = o.format.value_or(Extension(o.output))};
  if (c.format == "gv") c.format = "dot";
  if (c.format != "svg" && c.format != "png" && c.format != "dot") {
    std::fprintf(stderr,
                 "graph: cannot tell the format of '%s': use .svg, .png or .dot (or --format)\n",
                 o.output.c_str());
    return std::nullopt;
  }
  const std::string view = o.view.value_or(c.format == "dot" ? "dataflow" : "liveness");
  if (view != "liveness" && view != "dataflow") {
    std::fprintf(stderr, "graph: --view must be liveness or dataflow, not '%s'\n", view.c_str());
    return std::nullopt;
  }
  c.liveness = view == "liveness";
  if (c.liveness && c.format == "dot") {
    std::fprintf(stderr, "graph: the liveness view is SVG or PNG; DOT is the dataflow view's\n");
    return std::nullopt;
  }
  if (o.rows == "buffers") c.rows = render::RowMode::kBuffers;
  if (o.rows == "layers") c.rows = render::RowMode::kGroups;
  if (o.rows != "auto" && o.rows != "buffers" && o.rows != "layers") {
    std::fprintf(stderr, "graph: --rows must be auto, buffers or layers, not '%s'\n",
                 o.rows.c_str());
    return std::nullopt;
  }
  return c;
}

// Each phase's maximum over the variable box, as `plan` reports it.
std::vector<render::PhaseMark> PhaseMarks(const verifier::Manifest& m,
                                          const simulator::LoadPlan& plan) {
  std::vector<render::PhaseMark> marks;
  for (const simulator::PhasePeak& p : simulator::ComputePhases(m, plan).phases) {
    if (!p.max || p.max->value < 0) continue;
    const bool varies = p.min && p.min->value != p.max->value;  // else "at" says nothing
    marks.push_back({.name = p.name,
                     .bytes = static_cast<uint64_t>(p.max->value),
                     .at = varies ? verifier::FormatAssignment(p.max->at) : ""});
  }
  return marks;
}

base::Result<std::string> Render(const Choice& c, const PlannedInput& in) {
  if (!c.liveness) {
    return render::RenderGraph(
        in.plan, c.format == "dot" ? render::GraphFormat::kDot : render::GraphFormat::kSvg);
  }
  return render::RenderLivenessSvg(
      in.plan, {.rows = c.rows, .phases = PhaseMarks(*in.input.check.manifest, in.plan)});
}

}  // namespace

int RunGraph(const GraphOptions& options) {
  const std::optional<Choice> choice = Choose(options);
  if (!choice) return 2;
  Outcome<PlannedInput> in = LoadAndPlan(options.file, options.plan, Reporting::ForRendering());
  if (!in.ok()) return in.exit_code();
  base::Result<std::string> r = Render(*choice, *in);
  if (r.ok() && choice->format == "png") r = render::SvgToPng(*r);
  if (!r.ok()) {
    std::fprintf(stderr, "graph: %s\n", r.status().message().c_str());
    return 2;
  }
  if (const base::Status written = WriteOutput(options.output, *r); !written.ok()) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 2;
  }
  if (options.output != "-") {
    std::fprintf(stderr, "wrote %s (%s view): %zu derive calls, %zu buffers\n",
                 options.output.c_str(), choice->liveness ? "liveness" : "dataflow",
                 in->plan.calls.size(), in->plan.buffers.size());
  }
  return 0;
}

}  // namespace loadplan::cli
