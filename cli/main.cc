// `loadplan`: the command line. The only file that includes CLI11 (it costs ~7 s per file).
#include <cstdio>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cmd_check.h"
#include "cli/cmd_fuzz.h"
#include "cli/cmd_gen.h"
#include "cli/cmd_graph.h"
#include "cli/cmd_kernels.h"
#include "cli/cmd_place.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_run.h"
#include "cli/cmd_timeline.h"
#include "simulator/placement.h"

namespace {

namespace cli = loadplan::cli;
namespace sim = loadplan::simulator;

const std::map<std::string, cli::Format> kFormats{{"text", cli::Format::kText}, {"json", cli::Format::kJson}};

// --lanes, --prefetch, --placement: the plan options every planning command takes.
void AddPlanOptions(CLI::App* cmd, sim::PlanOptions& o, std::string& placement) {
  cmd->add_option("--lanes", o.lanes, "Load lanes (overrides the manifest's load.lanes)")->check(CLI::Range(1, 1024));
  cmd->add_option("--prefetch", o.prefetch, "Prefetch distance in derive calls (overrides load.prefetch)");
  cmd->add_option("--placement", placement, "Staging placement policy: first-fit, best-fit, exact, best")
      ->check([](const std::string& s) {
        return sim::ParsePlacementPolicy(s) ? std::string() : "unknown placement policy " + s;
      });
}

void ApplyPlacement(const std::string& name, sim::PlanOptions& o) {
  if (!name.empty()) o.placement = *sim::ParsePlacementPolicy(name);
}

struct Commands {
  cli::CheckOptions check;
  cli::GenCliOptions gen;
  cli::ExampleCliOptions example;
  cli::PlaceOptions place;
  cli::PlanCliOptions plan;
  cli::RunCliOptions run;
  cli::FuzzCliOptions fuzz;
  cli::GraphOptions graph;
  cli::TimelineOptions timeline;
  std::string graph_placement, timeline_placement, plan_placement, run_placement;
  int code = 0;
};

void AddCheck(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("check", "Verify manifests: every rule, every error, with JSON pointers");
  cmd->add_option("files", c.check.files, "Manifest files (none: the embedded gpt-oss-120b example)");
  cmd->add_option("--format", c.check.format, "Output format: text or json")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
  cmd->callback([&c] { c.code = cli::RunCheck(c.check); });
}

void AddGen(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("gen", "Write a synthetic safetensors checkpoint (sharded) for a manifest");
  cmd->add_option("manifest", c.gen.manifest, "Manifest file (none: the embedded gpt-oss-120b example)");
  cmd->add_option("-o,--output", c.gen.out_dir, "Output directory")->required();
  cmd->add_option("--seed", c.gen.seed, "Random seed (the bytes are a pure function of seed and tensor name)");
  cmd->add_option("--layers", c.gen.layers, "Only tensors of layers < N (names with 'layers.K.')")->check(CLI::NonNegativeNumber);
  cmd->add_option("--shard-bytes", c.gen.shard_bytes, "Start a new shard past this many bytes");
  cmd->callback([&c] { c.code = cli::RunGen(c.gen); });
}

void AddExample(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("example", "Write a builder example manifest (gpt-oss-120b, k3-stage, tiny)");
  cmd->add_option("name", c.example.name, "Example name")->check(CLI::IsMember({"gpt-oss-120b", "k3-stage", "tiny"}));
  cmd->add_option("--layers", c.example.layers, "Layer count (gpt-oss-120b, k3-stage)")->check(CLI::Range(1, 4096));
  cmd->add_option("-o,--output", c.example.out, "Output file (default: stdout)");
  cmd->callback([&c] { c.code = cli::RunExample(c.example); });
}

void AddPlan(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("plan", "Plan the load and predict peak memory per phase, across the variable box");
  cmd->add_option("file", c.plan.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("--at", c.plan.at, "Evaluate at VAR=VALUE (repeatable)");
  cmd->add_option("--device-memory", c.plan.device_memory, "Device memory: a size (141GiB, 288GB, bytes) or a preset (h200, b200, gb300)");
  cmd->add_option("--format", c.plan.format, "Output format: text or json")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
  AddPlanOptions(cmd, c.plan.plan, c.plan_placement);
  cmd->callback([&c] {
    ApplyPlacement(c.plan_placement, c.plan.plan);
    c.code = cli::RunPlan(c.plan);
  });
}

void AddRun(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("run", "Load a checkpoint on the GPU: staged sources, derive kernels, measured peak");
  auto& o = c.run;
  cmd->add_option("manifest", o.manifest, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("--checkpoint", o.checkpoint, "Checkpoint: a directory, index JSON or .safetensors file")->required();
  cmd->add_flag("--check", o.check, "Also run the host backend and compare every derived carry byte for byte");
  cmd->add_option("--memory-limit", o.memory_limit, "Cap on device bytes (e.g. 12GiB): allocations past it fail");
  cmd->add_flag("--naive", o.naive, "Load every source as a resident weight, derive after (the naive way)");
  cmd->add_flag("--no-derive", o.no_derive, "Load only; run no derive kernel");
  cmd->add_option("--save-derived", o.save_derived, "Write every derived carry as safetensors into DIR");
  cmd->add_option("--io-threads", o.io_threads, "I/O threads (each with pinned double buffers and a stream)")->check(CLI::Range(1, 256));
  cmd->add_option("--chunk-mib", o.chunk_mib, "Copy chunk size in MiB")->check(CLI::PositiveNumber);
  cmd->add_option("--repeat", o.repeat, "Loads in a row; the median is reported")->check(CLI::Range(1, 100));
  cmd->add_flag("--ceilings", o.ceilings, "Measure pinned H2D and host-read ceilings first, in the same run");
  cmd->add_option("--device", o.device, "CUDA device index");
  cmd->add_option("--format", o.format, "Output format: text or json")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
  AddPlanOptions(cmd, o.plan, c.run_placement);
  cmd->callback([&c] {
    ApplyPlacement(c.run_placement, c.run.plan);
    c.code = cli::RunRun(c.run);
  });
}

void AddFuzz(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("fuzz", "Run the RapidCheck properties (soundness, completeness, totality, round trip)");
  cmd->add_option("--cases", c.fuzz.cases, "Cases per property");
  cmd->add_option("--seed", c.fuzz.seed, "Seed (a failure prints the reproduce string)");
  cmd->add_option("--around", c.fuzz.around, "Mutate this manifest instead of generated ones");
  cmd->callback([&c] { c.code = cli::RunFuzz(c.fuzz); });
}

void AddPlace(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("place", "Place buffers of a MiniMalloc CSV (id,lower,upper,size) and add an offset column");
  cmd->add_option("file", c.place.input, "CSV file ('-': stdin)")->required();
  cmd->add_option("--policy", c.place.policy, "first-fit, best-fit, exact, best");
  cmd->add_option("--alignment", c.place.alignment, "Offsets are multiples of this")->check(CLI::PositiveNumber);
  cmd->add_option("-o,--output", c.place.output, "Output CSV (default: stdout)");
  cmd->add_option("--work-budget", c.place.work_budget, "Counted inner-loop steps of the exact search");
  cmd->add_option("--node-budget", c.place.node_budget, "Nodes of the exact search");
  cmd->add_option("--time-budget", c.place.time_budget_s, "Wall-clock cap on the exact search, seconds (non-deterministic)");
  cmd->callback([&c] { c.code = cli::RunPlace(c.place); });
}

void AddGraph(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("graph", "Draw the buffer liveness graph (Graphviz): -o out.svg | out.dot");
  cmd->add_option("file", c.graph.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("-o,--output", c.graph.output, "out.svg, out.dot or '-'")->required();
  cmd->add_option("--format", c.graph.format, "svg or dot (default: from the extension)");
  AddPlanOptions(cmd, c.graph.plan, c.graph_placement);
  cmd->callback([&c] {
    ApplyPlacement(c.graph_placement, c.graph.plan);
    c.code = cli::RunGraph(c.graph);
  });
}

void AddTimeline(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("timeline", "Memory over the plan's clock: -o out.svg, or Chrome trace -o out.json");
  cmd->add_option("file", c.timeline.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("-o,--output", c.timeline.output, "out.svg, out.json or '-'")->required();
  cmd->add_option("--format", c.timeline.format, "svg or json (default: from the extension)");
  AddPlanOptions(cmd, c.timeline.plan, c.timeline_placement);
  cmd->callback([&c] {
    ApplyPlacement(c.timeline_placement, c.timeline.plan);
    c.code = cli::RunTimeline(c.timeline);
  });
}

// `loadplan kernels [NAME] [--format json]`: the kernel registry (cli/cmd_kernels.h).
void AddKernels(CLI::App& app, int& code) {
  static cli::KernelsOptions options;
  auto* cmd = app.add_subcommand("kernels", "List the kernel registry, or print one kernel's declaration to paste");
  cmd->add_option("name", options.name, "Kernel name (none: list every registry kernel)");
  cmd->add_option("--format", options.format, "Output format: text or json")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case));
  cmd->callback([&code] { code = cli::RunKernels(options); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loadplan: verify, plan and execute staged checkpoint loads"};
  app.set_version_flag("--version", std::string("loadplan ") + LOADPLAN_VERSION);
  app.require_subcommand(1);
  Commands c;
  AddCheck(app, c);
  AddGen(app, c);
  AddExample(app, c);
  AddPlan(app, c);
  AddRun(app, c);
  AddFuzz(app, c);
  AddPlace(app, c);
  AddGraph(app, c);
  AddTimeline(app, c);
  AddKernels(app, c.code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // --help / --version exit 0; usage errors exit 2
  }
  return c.code;
}
