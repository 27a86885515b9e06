// `loadplan plan --svg PATH`: the capacity picture of the report's fit frontier.
#include <cstdio>
#include <fstream>

#include "api/plan_frontier.h"
#include "cli/cmd_plan_report.h"
#include "cli/render/capacity_svg.h"

namespace loadplan::cli {

int WriteCapacitySvg(const verifier::Manifest& m, const PlanReport& r, const std::string& path) {
  const simulator::capacity::PeakModel model = api::PeakModelOf(m, r);
  const simulator::capacity::Frontier f = api::FrontierOf(m, r);
  const base::Result<std::string> svg =
      render::RenderCapacitySvg(model, f, "capacity of " + m.name + " on " + r.device_label);
  if (!svg.ok()) {
    std::fprintf(stderr, "loadplan plan: --svg %s: %s\n", path.c_str(),
                 svg.status().message().c_str());
    return 2;
  }
  std::ofstream out(path, std::ios::binary);
  out << *svg;
  out.close();
  if (!out) {
    std::fprintf(stderr, "loadplan plan: --svg %s: cannot write the file\n", path.c_str());
    return 2;
  }
  return 0;
}

}  // namespace loadplan::cli
