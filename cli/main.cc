// `loadplan`: the command line. The only file that includes CLI11 (it costs ~7 s per file).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cmd_calibrate.h"
#include "cli/cmd_check.h"
#include "cli/cmd_fuzz.h"
#include "cli/cmd_gen.h"
#include "cli/cmd_import.h"
#include "cli/cmd_graph.h"
#include "cli/cmd_kernels.h"
#include "cli/cmd_place.h"
#include "cli/cmd_plan.h"
#include "cli/cmd_run.h"
#include "cli/cmd_timeline.h"
#include "cli/completion.h"
#include "cli/pipeline.h"
#include "importer/recipes.h"
#include "simulator/phases/phases.h"
#include "simulator/placement/placement.h"
#include "verifier/diag.h"

namespace {

namespace cli = loadplan::cli;
namespace sim = loadplan::simulator;

// Known values of an option (for its check and for completion), by "command --option".
std::map<std::string, std::vector<std::string>>& Choices() {
  static std::map<std::string, std::vector<std::string>> choices;
  return choices;
}

// Accepts one of `names` (case-insensitive) and rewrites it to its value in `to` (or itself);
// the message names the choices. No description: help shows the option's own text.
CLI::Validator Choice(std::vector<std::string> names, std::vector<std::string> to = {}) {
  return CLI::Validator(
      [names, to](std::string& s) {
        std::string lower = s;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (size_t i = 0; i < names.size(); ++i) {
          if (lower != names[i]) continue;
          s = to.empty() ? names[i] : to[i];
          return std::string();
        }
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        return fmt::format("'{}' is not one of: {}", s, list);
      },
      "");
}

CLI::Option* WithChoices(CLI::App* cmd, CLI::Option* o, std::vector<std::string> names) {
  Choices()[cmd->get_name() + " " + o->get_name()] = names;
  std::string list;  // the accepted values, shown by --help in place of the type
  for (const std::string& n : names) list += (list.empty() ? "" : "|") + n;
  o->type_name(list);
  return o->transform(Choice(std::move(names)));
}

// An integer in [lo, hi], with a plain message.
CLI::Validator IntIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && v >= lo && v <= hi)
          return std::string();
        return fmt::format("'{}' is not an integer from {} to {}", s, lo, hi);
      },
      fmt::format("{}..{}", lo, hi));  // --help shows the range beside the type
}

// An unsigned integer: CLI11 would wrap "-1" to 2^64-1.
CLI::Validator Unsigned() {
  return CLI::Validator(
      [](std::string& s) {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size()) return std::string();
        return fmt::format("'{}' is not an integer from 0 to {}", s, UINT64_MAX);
      },
      "");
}

// A finite number of seconds, zero or more ("-1" and "nan" are refused).
CLI::Validator Seconds() {
  return CLI::Validator(
      [](std::string& s) {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) && v >= 0)
          return std::string();
        return fmt::format("'{}' is not a number of seconds (finite, 0 or more)", s);
      },
      "");
}

void AddFormat(CLI::App* cmd, cli::Format& f) {
  Choices()[cmd->get_name() + " --format"] = {"text", "json"};
  cmd->add_option("--format", f, "Output format: text or json")
      ->transform(Choice({"text", "json"}, {"0", "1"}))
      ->default_str("text")
      ->type_name("text|json");
}

// --lanes, --prefetch, --placement: the plan options every planning command takes.
void AddPlanOptions(CLI::App* cmd, sim::PlanOptions& o, std::string& placement) {
  cmd->add_option("--lanes", o.lanes, "Load lanes (overrides the manifest's load.lanes)")
      ->check(IntIn(1, 1024));
  cmd->add_option("--prefetch", o.prefetch,
                  "Prefetch distance in derive calls (overrides load.prefetch)")
      ->check(IntIn(0, INT32_MAX));
  WithChoices(cmd,
              cmd->add_option("--placement", placement,
                              "Staging placement policy (default: the planner's)"),
              {"first-fit", "best-fit", "exact", "best"});
}

void ApplyPlacement(const std::string& name, sim::PlanOptions& o) {
  if (!name.empty()) o.placement = *sim::ParsePlacementPolicy(name);
}

struct Commands {
  cli::CheckOptions check;
  cli::GenCliOptions gen;
  cli::ExampleCliOptions example;
  cli::ImportCliOptions import;
  cli::PlaceOptions place;
  cli::PlanCliOptions plan;
  cli::RunCliOptions run;
  cli::CalibrateCliOptions calibrate;
  cli::FuzzCliOptions fuzz;
  cli::GraphOptions graph;
  cli::TimelineOptions timeline;
  cli::KernelsOptions kernels;
  std::string shell;
  std::string graph_placement, timeline_placement, plan_placement, run_placement;
  int code = 0;
};

void AddCheck(CLI::App& app, Commands& c) {
  auto* cmd =
      app.add_subcommand("check", "Verify manifests: every rule, every error, with JSON pointers");
  cmd->add_option("files", c.check.files,
                  "Manifest files (none: the embedded gpt-oss-120b example)");
  AddFormat(cmd, c.check.format);
  cmd->footer("Example:\n  loadplan check examples/tiny.json examples/k3-stage.json --format json");
  cmd->callback([&c] { c.code = cli::RunCheck(c.check); });
}

void AddGen(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "gen", "Write a synthetic safetensors checkpoint (sharded) for a manifest");
  cmd->add_option("manifest", c.gen.manifest,
                  "Manifest file (none: the embedded gpt-oss-120b example, with --yes)");
  cmd->add_option("-o,--output", c.gen.out_dir, "Output directory (created if missing)")
      ->required();
  cmd->add_flag("--yes", c.gen.yes,
                "Without a manifest: write the embedded gpt-oss-120b example (about 65 GB)");
  cmd->add_option("--seed", c.gen.seed,
                  "Random seed (the bytes are a pure function of seed and tensor name)")
      ->check(Unsigned());
  cmd->add_option("--layers", c.gen.layers, "Only tensors of layers < N (names with 'layers.K.')")
      ->check(IntIn(0, INT32_MAX));
  cmd->add_option("--shard-bytes", c.gen.shard_bytes, "Start a new shard past this many bytes");
  cmd->footer("Example:\n  loadplan example tiny -o tiny.json && loadplan gen tiny.json -o ckpt/");
  cmd->callback([&c] { c.code = cli::RunGen(c.gen); });
}

std::vector<std::string> RecipeChoices() {
  std::vector<std::string> v;
  for (std::string_view n : loadplan::importer::RecipeNames()) v.emplace_back(n);
  return v;
}

// import's deployments: pipeline stages, tensor- and expert-parallel ranks.
void AddImportSplits(CLI::App* cmd, cli::ImportCliOptions& o) {
  cmd->add_option("--pipeline", o.pipeline,
                  "Split into N pipeline stages balancing checkpoint bytes: -o DIR gets "
                  "stage-0.json ... and deploy.json (docs/import.md)");
  cmd->add_option("--tensor-parallel", o.tensor_parallel,
                  "Split into T tensor-parallel ranks, each reading its slices of the "
                  "checkpoint: -o DIR gets rank-0.json ... and deploy.json (docs/deploy.md); "
                  "with --pipeline P, each stage into T: stage-P-rank-T.json ...")
      ->check(IntIn(1, 4096));
  cmd->add_option("--expert-parallel", o.expert_parallel,
                  "With per-expert MoE tensors: deal the experts whole over T x E ranks "
                  "(attention tensor-parallel within T), -o DIR as --tensor-parallel")
      ->check(IntIn(1, 4096))
      ->excludes("--pipeline");
}

void AddImport(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "import", "Make a manifest from a Hugging Face model folder (config.json + safetensors)");
  auto& o = c.import;
  cmd->add_option("model_dir", o.dir,
                  "Model folder: config.json and model.safetensors[.index.json]")
      ->required();
  cmd->add_option("-o,--output", o.out,
                  "Output manifest (default: stdout); with --pipeline, the stages' folder");
  WithChoices(cmd,
              cmd->add_option("--recipe", o.recipe,
                              "What derive programs to make (auto: from quantization_config)"),
              RecipeChoices());
  auto* kv = cmd->add_option("--kv-dtype", o.kv_dtype, "KV-cache element type");
  const std::vector<std::string> kv_names = {"bf16", "f16", "f32", "f8_e4m3", "f8_e5m2"};
  Choices()["import --kv-dtype"] = kv_names;
  kv->transform(Choice(kv_names, {"BF16", "F16", "F32", "F8_E4M3", "F8_E5M2"}));
  cmd->add_option("--max-batch", o.max_batch, "Upper bound of `batch` (default 256)")
      ->check(IntIn(1, INT32_MAX));
  cmd->add_option("--max-ctx", o.max_ctx,
                  "Upper bound of `ctx` (default: the config's max_position_embeddings)")
      ->check(IntIn(1, INT32_MAX));
  cmd->add_option("--name", o.name, "Manifest name (default: the folder's name)");
  AddImportSplits(cmd, o);
  WithChoices(cmd,
              cmd->add_option("--layout", o.layout,
                              "Weights as the checkpoint stores them, or as transformers' model "
                              "classes hold them (experts stacked, renames)"),
              {"checkpoint", "transformers"});
  cmd->add_flag("--strict", o.strict,
                "Refuse an unknown model_type, a missing config.json or key, and tensors that "
                "contradict the config (default: notes and warnings)");
  cmd->add_option("--kv-bytes-per-token", o.kv_bytes_per_token,
                  "The cache as one buffer of N bytes per token of context (for a geometry the "
                  "config does not tell)")
      ->check(IntIn(1, INT64_MAX));
  cmd->footer(
      "Example:\n  loadplan import ~/models/gpt-oss-20b -o gpt-oss-20b.json && loadplan plan "
      "gpt-oss-20b.json");
  cmd->callback([&c] { c.code = cli::RunImport(c.import); });
}

void AddExample(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("example",
                                 "Write a builder example manifest (gpt-oss-120b, k3-stage, tiny)");
  WithChoices(cmd, cmd->add_option("name", c.example.name, "Example name"),
              {"gpt-oss-120b", "k3-stage", "tiny"});
  cmd->add_option("--layers", c.example.layers, "Layer count (gpt-oss-120b, k3-stage)")
      ->check(IntIn(1, 4096));
  cmd->add_option("-o,--output", c.example.out, "Output file (default: stdout)");
  cmd->footer("Example:\n  loadplan example gpt-oss-120b --layers 2 -o m2.json");
  cmd->callback([&c] { c.code = cli::RunExample(c.example); });
}

void AddPlan(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "plan", "Plan the load and predict peak memory per phase, across the variable box");
  cmd->add_option("file", c.plan.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("--at", c.plan.at, "Evaluate at VAR=VALUE (repeatable, once per variable)");
  cmd->add_option("--device-memory", c.plan.device_memory,
                  "Device memory: a size (141GiB, 288GB, bytes), a preset (" + sim::PresetNames() +
                      ") or free (read from the GPU now)");
  cmd->add_option("--reserve", c.plan.reserve,
                  "Bytes the manifest does not hold (CUDA context, allocator slack): the budget is "
                  "device memory less this");
  cmd->add_option("--device", c.plan.device, "CUDA device index for --device-memory free");
  cmd->add_option("--svg", c.plan.svg,
                  "Write the capacity picture (peak heat map, fit frontier) to this .svg or .png");
  AddFormat(cmd, c.plan.format);
  AddPlanOptions(cmd, c.plan.plan, c.plan_placement);
  cmd->add_option("--machine", c.plan.machine,
                  "Machine profile (loadplan calibrate): predict the load time");
  WithChoices(cmd,
              cmd->add_option("--cache", c.plan.cache,
                              "Checkpoint in the page cache (hot) or evicted (cold)"),
              {"hot", "cold"});
  cmd->add_option("--fit", c.plan.fit,
                  "Fastest lanes/prefetch/placement/staged-or-naive whose load peak fits SIZE");
  cmd->footer(
      "Example:\n  loadplan plan examples/gpt-oss-120b.json --at batch=64 --device-memory h200\n"
      "  loadplan plan m8.json --fit 20GiB --machine h200.json --cache cold");
  cmd->callback([&c] {
    ApplyPlacement(c.plan_placement, c.plan.plan);
    c.code = cli::RunPlan(c.plan);
  });
}

void AddCalibrate(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "calibrate", "Measure this GPU machine's load rates into a profile for plan --machine");
  auto& o = c.calibrate;
  cmd->add_option("-o,--output", o.out, "Profile file (default: stdout)");
  cmd->add_option("--device", o.device, "CUDA device index");
  cmd->add_option("--dir", o.dir, "Directory for the scratch file (read hot, then evicted)");
  cmd->add_option("--scratch-gib", o.scratch_gib, "Scratch file size in GiB")
      ->check(CLI::Range(0.0625, 1024.0));
  cmd->add_option("--io-threads", o.io_threads, "I/O threads of the measured pipeline")
      ->check(IntIn(1, 256));
  cmd->add_option("--chunk-mib", o.chunk_mib, "Chunk size of the measured pipeline in MiB")
      ->check(CLI::Range(0.00390625, 1024.0));
  cmd->add_flag("--choose-io", o.choose_io,
                "Also time a grid of I/O threads x chunk sizes and keep the fastest in the "
                "profile (what run --machine uses)");
  cmd->footer("Example:\n  loadplan calibrate -o h200.json --dir /tmp --choose-io");
  cmd->callback([&c] { c.code = cli::RunCalibrate(c.calibrate); });
}

// A number above zero (fractions allowed), as --chunk-mib and --read-mib take.
CLI::Validator PositiveNumber() {
  return CLI::Validator(
      [](std::string& s) {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && end == s.data() + s.size() && v > 0
                   ? std::string()
                   : "'" + s + "' is not a positive number";
      },
      "");
}

// How `run` reads: O_DIRECT, slices, the I/O pair, the machine profile, the read size.
void AddRunIo(CLI::App* cmd, cli::RunCliOptions& o) {
  cmd->add_flag("--direct", o.direct,
                "Read with O_DIRECT, around the page cache (files not cached; docs/runtime.md)");
  WithChoices(cmd,
              cmd->add_option("--slice-read", o.slice_read,
                              "A slice along a dimension > 0: a pread per run, its covering span "
                              "gathered on the way to the device, its runs copied out of a "
                              "mapping of the file's pages (buffered reads), or chosen per slice "
                              "from the machine's figures among the three (default auto)"),
              {"auto", "runs", "span", "map"});
  cmd->add_option("--io-threads", o.io_threads,
                  "I/O threads (each with pinned double buffers and a stream)")
      ->check(IntIn(1, 256));
  cmd->add_option("--chunk-mib", o.chunk_mib, "Copy chunk size in MiB (fractions allowed)")
      ->check(PositiveNumber());
  cmd->add_option("--machine", o.machine,
                  "Machine profile (loadplan calibrate): its I/O threads and chunk size, where "
                  "--io-threads / --chunk-mib are not given");
  cmd->add_option("--read-mib", o.read_mib,
                  "pread size within a chunk in MiB (default: the chunk; buffered reads only)")
      ->check(PositiveNumber());
}

void AddRun(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "run", "Load a checkpoint on the GPU: staged sources, derive kernels, measured peak");
  auto& o = c.run;
  cmd->add_option("manifest", o.manifest, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("--checkpoint", o.checkpoint,
                  "Checkpoint: a directory, index JSON or .safetensors file")
      ->required();
  cmd->add_flag("--check", o.check,
                "Also run the host backend and compare every derived carry byte for byte");
  cmd->add_option("--memory-limit", o.memory_limit,
                  "Cap on device bytes (e.g. 12GiB): allocations past it fail");
  cmd->add_option("--reserve", o.reserve,
                  "Device bytes left free beside the load, checked before it starts (default: "
                  "the CUDA context + modules calibrate measured, 526.8 MiB on the H200)");
  cmd->add_flag("--naive", o.naive,
                "Load every source as a resident weight, derive after (the naive way)");
  cmd->add_flag("--no-derive", o.no_derive, "Load only; run no derive kernel");
  cmd->add_option(
      "--save-derived", o.save_derived,
      "Write every derived carry as safetensors into DIR (a temporary, renamed at the end)");
  AddRunIo(cmd, o);
  cmd->add_option("--repeat", o.repeat, "Loads in a row; the median is reported")
      ->check(IntIn(1, 100));
  cmd->add_flag("--ceilings", o.ceilings,
                "Measure pinned H2D and host-read ceilings first, in the same run");
  cmd->add_option("--device", o.device, "CUDA device index");
  AddFormat(cmd, o.format);
  AddPlanOptions(cmd, o.plan, c.run_placement);
  cmd->footer("Example:\n  loadplan run m2.json --checkpoint ckpt/ --check");
  cmd->callback([&c] {
    ApplyPlacement(c.run_placement, c.run.plan);
    c.code = cli::RunRun(c.run);
  });
}

void AddFuzz(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "fuzz", "Run the RapidCheck properties (soundness, completeness, totality, round trip)");
  // RapidCheck's runner aborts (std::bad_alloc) past about 2^30 cases per property: 10^9 is
  // the most it is asked for.
  cmd->add_option("--cases", c.fuzz.cases, "Cases per property (1 to 1000000000)")
      ->check(IntIn(1, 1000000000))
      ->default_str("1000");
  cmd->add_option("--seed", c.fuzz.seed, "Seed (a failure prints the reproduce string)")
      ->check(Unsigned());
  cmd->add_option("--around", c.fuzz.around, "Mutate this manifest instead of generated ones");
  cmd->footer("Example:\n  loadplan fuzz --around examples/tiny.json --cases 100 --seed 1");
  cmd->callback([&c] { c.code = cli::RunFuzz(c.fuzz); });
}

void AddPlace(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "place", "Place buffers of a MiniMalloc CSV (id,lower,upper,size) and add an offset column");
  cmd->add_option("file", c.place.input, "CSV file ('-': stdin)")->required();
  WithChoices(cmd, cmd->add_option("--policy", c.place.policy, "Placement policy"),
              {"first-fit", "best-fit", "exact", "best"});
  cmd->add_option("--alignment", c.place.alignment, "Offsets are multiples of this")
      ->check(IntIn(1, INT64_MAX));
  cmd->add_option("-o,--output", c.place.output, "Output CSV (default: stdout)");
  cmd->add_option("--work-budget", c.place.work_budget,
                  "Counted inner-loop steps of the exact search");
  cmd->add_option("--node-budget", c.place.node_budget, "Nodes of the exact search");
  cmd->add_option("--time-budget", c.place.time_budget_s,
                  "Wall-clock cap on the exact search, seconds (non-deterministic)")
      ->check(Seconds());
  cmd->footer(
      "Example:\n  loadplan place ../shared/data/minimalloc/challenging/A.1048576.csv -o "
      "A.out.csv");
  cmd->callback([&c] { c.code = cli::RunPlace(c.place); });
}

void AddGraph(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "graph", "Draw buffer liveness on the plan's clock (-o out.svg | out.png), or the dataflow");
  cmd->add_option("file", c.graph.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("-o,--output", c.graph.output, "out.svg, out.png, out.dot or '-'")->required();
  cmd->add_option("--format", c.graph.format, "svg, png or dot (default: from the extension)");
  WithChoices(cmd,
              cmd->add_option("--view", c.graph.view,
                              "liveness (bars on the clock) or dataflow (Graphviz; DOT's only "
                              "view; default: liveness, dataflow for .dot)"),
              {"liveness", "dataflow"});
  WithChoices(cmd,
              cmd->add_option("--rows", c.graph.rows,
                              "Liveness rows: one per buffer, per layer, or auto (per layer past "
                              "64 buffers)")
                  ->capture_default_str(),
              {"auto", "buffers", "layers"});
  AddPlanOptions(cmd, c.graph.plan, c.graph_placement);
  cmd->footer(
      "Examples:\n  loadplan graph examples/tiny.json -o tiny.svg\n  loadplan graph "
      "examples/tiny.json --view dataflow -o tiny-dataflow.svg");
  cmd->callback([&c] {
    ApplyPlacement(c.graph_placement, c.graph.plan);
    c.code = cli::RunGraph(c.graph);
  });
}

void AddTimeline(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "timeline", "Memory over the plan's clock: -o out.svg, or Chrome trace -o out.json");
  cmd->add_option("file", c.timeline.file, "Manifest (none: the embedded gpt-oss-120b example)");
  cmd->add_option("-o,--output", c.timeline.output, "out.svg, out.png, out.json or '-'")
      ->required();
  cmd->add_option("--format", c.timeline.format, "svg, png or json (default: from the extension)");
  AddPlanOptions(cmd, c.timeline.plan, c.timeline_placement);
  cmd->footer(
      "Example:\n  loadplan timeline examples/tiny.json -o tiny.json   # Chrome trace "
      "(ui.perfetto.dev)");
  cmd->callback([&c] {
    ApplyPlacement(c.timeline_placement, c.timeline.plan);
    c.code = cli::RunTimeline(c.timeline);
  });
}

cli::CompletionOption OptionOf(const std::string& command, const CLI::Option& o) {
  cli::CompletionOption out{.description = o.get_description(),
                            .takes_value = o.get_type_size() != 0};
  for (const std::string& n : o.get_snames()) out.names.push_back("-" + n);
  for (const std::string& n : o.get_lnames()) out.names.push_back("--" + n);
  if (auto it = Choices().find(command + " " + o.get_name()); it != Choices().end())
    out.choices = it->second;
  return out;
}

// The command line as CLI11 defines it: every subcommand, its options and choices.
cli::CompletionSpec SpecOf(const CLI::App& app) {
  cli::CompletionSpec spec;
  for (const CLI::Option* o : app.get_options()) spec.global_options.push_back(OptionOf("", *o));
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    cli::CompletionCommand c{.name = sub->get_name(), .description = sub->get_description()};
    for (const CLI::Option* o : sub->get_options()) {
      if (!o->get_positional()) {
        c.options.push_back(OptionOf(c.name, *o));
      } else if (auto it = Choices().find(c.name + " " + o->get_name()); it != Choices().end()) {
        c.positional_choices = it->second;
      }
    }
    spec.commands.push_back(std::move(c));
  }
  return spec;
}

void AddCompletion(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand("completion",
                                 "Print a shell completion script (bash or zsh) for loadplan");
  WithChoices(cmd, cmd->add_option("shell", c.shell, "bash or zsh")->required(), {"bash", "zsh"});
  cmd->footer("Example:\n  source <(loadplan completion bash)     # or zsh; see docs/cli.md");
  cmd->callback([&app, &c] {
    std::fputs(cli::CompletionScript(SpecOf(app), c.shell).value_or("").c_str(), stdout);
    c.code = 0;
  });
}

// `loadplan chek x.json`: CLI11 would say "A subcommand is required"; name the nearest command.
bool UnknownCommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return false;
    names.push_back(sub->get_name());
  }
  const std::string near = loadplan::verifier::DidYouMean(argv[1], names);
  std::cerr << "loadplan: unknown command '" << argv[1] << "'"
            << (near.empty() ? "" : "; did you mean '" + near + "'?")
            << "\nRun with --help for the commands.\n";
  return true;
}

// An option the command does not have, with the nearest it has: "loadplan plan: unknown option
// '--lane'; did you mean '--lanes'?" (CLI11 would list the extras and stop there). False when
// the arguments hold no unknown "--" option.
bool UnknownOption(const CLI::App& app, int argc, char** argv) {
  if (argc < 3) return false;
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == argv[1]) sub = s;
  }
  if (sub == nullptr) return false;
  std::vector<std::string> known;
  for (const CLI::Option* o : sub->get_options()) {
    for (const std::string& l : o->get_lnames()) known.push_back("--" + l);
  }
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) != known.end()) continue;
    const std::string near = loadplan::verifier::DidYouMean(arg, known);
    std::cerr << "loadplan " << argv[1] << ": unknown option '" << arg << "'"
              << (near.empty() ? "" : "; did you mean '" + near + "'?") << "\nRun with " << argv[1]
              << " --help for its options.\n";
    return true;
  }
  return false;
}

// `loadplan kernels [NAME] [--format json]`: the kernel registry (cli/cmd_kernels.h).
void AddKernels(CLI::App& app, Commands& c) {
  auto* cmd = app.add_subcommand(
      "kernels", "List the kernel registry, or print one kernel's declaration to paste");
  cmd->add_option("name", c.kernels.name, "Kernel name (none: list every registry kernel)");
  AddFormat(cmd, c.kernels.format);
  cmd->footer(
      "Example:\n  loadplan kernels mxfp4_fc1_weight     # the declaration to paste into a "
      "manifest");
  cmd->callback([&c] { c.code = cli::RunKernels(c.kernels); });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loadplan: verify, plan and execute staged checkpoint loads"};
  app.set_version_flag("--version", std::string("loadplan ") + LOADPLAN_VERSION);
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  app.footer(
      "Exit codes: 0 clean, 1 verification errors (or a peak over --device-memory, a run "
      "mismatch),\n"
      "2 usage error or unreadable input, 3 CUDA error, 4 internal error. See docs/cli.md.");
  Commands c;
  AddCheck(app, c);
  AddGen(app, c);
  AddImport(app, c);
  AddExample(app, c);
  AddPlan(app, c);
  AddRun(app, c);
  AddCalibrate(app, c);
  AddFuzz(app, c);
  AddPlace(app, c);
  AddGraph(app, c);
  AddTimeline(app, c);
  AddKernels(app, c);
  AddCompletion(app, c);
  if (UnknownCommand(app, argc, argv) || UnknownOption(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return loadplan::cli::FinishStdout(
        rc == 0 ? 0 : 2);  // --help / --version exit 0; usage errors exit 2
  }
  return loadplan::cli::FinishStdout(c.code);
}
