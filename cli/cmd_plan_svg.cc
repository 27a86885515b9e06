// `loadplan plan --svg PATH`: the capacity picture of the report's fit frontier (.svg, or .png).
#include <cstdio>

#include "api/plan_frontier.h"
#include "cli/cmd_plan_report.h"
#include "cli/pipeline.h"
#include "cli/render/capacity_svg.h"
#include "cli/render/png.h"

namespace loadplan::cli {

int WriteCapacitySvg(const verifier::Manifest& m, const PlanReport& r, const std::string& path) {
  const simulator::capacity::PeakModel model = api::PeakModelOf(m, r);
  const simulator::capacity::Frontier f = api::FrontierOf(m, r);
  base::Result<std::string> picture =
      render::RenderCapacitySvg(model, f, "capacity of " + m.name + " on " + r.device_label);
  if (picture.ok() && Extension(path) == "png") picture = render::SvgToPng(*picture);
  if (!picture.ok()) {
    std::fprintf(stderr, "loadplan plan: --svg %s: %s\n", path.c_str(),
                 picture.status().message().c_str());
    return 2;
  }
  if (const base::Status written = WriteOutput(path, *picture); !written.ok()) {
    std::fprintf(stderr, "loadplan plan: --svg %s\n", written.message().c_str());
    return 2;
  }
  if (path != "-") std::fprintf(stderr, "wrote %s (capacity map)\n", path.c_str());
  return 0;
}

}  // namespace loadplan::cli
