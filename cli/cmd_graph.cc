// `loadplan graph`: verify, plan, and render the liveness graph (cli/render/graph.h).
#include "cli/cmd_graph.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli/input.h"
#include "cli/render/graph.h"
#include "cli/self_check.h"
#include "verifier/diag.h"

namespace loadplan::cli {

std::string Extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

PlannedInput LoadAndPlan(const std::string& file, const simulator::PlanOptions& options) {
  CheckedInput in = LoadAndCheck(file);
  if (!in.read_error.empty()) {
    std::fprintf(stderr, "%s: %s\n", in.display_name.c_str(), in.read_error.c_str());
    return {std::nullopt, 2};
  }
  std::fputs(verifier::FormatText(in.check.result.diags, in.display_name).c_str(), stderr);
  if (!in.check.parsed || !in.check.manifest) return {std::nullopt, 2};
  if (!in.check.result.ok()) {
    std::fprintf(stderr, "%s: not planned: the manifest has verification errors\n", in.display_name.c_str());
    return {std::nullopt, 1};
  }
  simulator::LoadPlan plan = simulator::Plan(*in.check.result.verified, options);
  if (!PlanPassesChecker(*in.check.manifest, plan, in.display_name)) return {std::nullopt, kInternalError};
  return {std::move(plan), 0};
}

bool WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0) return true;
    std::fputs("cannot write to stdout\n", stderr);
    return false;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (out) return true;
  std::fprintf(stderr, "cannot write %s\n", path.c_str());
  return false;
}

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
  PlannedInput in = LoadAndPlan(options.file, options.plan);
  if (!in.plan) return in.exit_code;
  const base::Result<std::string> r = render::RenderGraph(*in.plan, *kind);
  if (!r.ok()) {
    std::fprintf(stderr, "graph: %s\n", r.status().message().c_str());
    return 2;
  }
  if (!WriteOutput(options.output, *r)) return 2;
  if (options.output != "-") {
    std::fprintf(stderr, "wrote %s: %zu derive calls, %zu buffers\n", options.output.c_str(), in.plan->calls.size(),
                 in.plan->buffers.size());
  }
  return 0;
}

}  // namespace loadplan::cli
