// `loadplan run`: verify, plan, preflight the checkpoint, load it through the API
// (api::LoadPlanned: the CUDA backend), measure, report.
#include "cli/cmd_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <memory>
#include <numeric>
#include <utility>
#include <optional>

#include <fmt/format.h>

#include "api/launch.h"
#include "api/loadplan.h"
#include "backend/cuda/free_memory.h"
#include "backend/load_output.h"
#include "backend/preflight.h"
#include "base/seconds.h"
#include "base/status_lines.h"
#include "base/unix_time.h"
#include "cli/cmd_run_internal.h"
#include "cli/cmd_plan_deploy.h"
#include "cli/interrupt.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "simulator/phases/phases.h"
#include "simulator/plan_totals.h"
#include "simulator/timing/profile.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

using backend::Status;
using Clock = std::chrono::steady_clock;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "loadplan run: %s\n", message.c_str());
  return code;
}

// Ctrl-C (docs/cli.md): the shell's convention for a command SIGINT ended, 128 + 2.
constexpr int kExitInterrupted = 130;

// A failed load's or save's exit code: 130 when Ctrl-C cancelled it, else `code`.
int FailStatus(int code, const base::Status& st) {
  return Fail(st.kind() == base::ErrorKind::kCancelled ? kExitInterrupted : code, st.message());
}

struct Setup {
  verifier::VerifiedManifest manifest;
  std::shared_ptr<const simulator::LoadPlan> plan;
  std::unique_ptr<backend::Checkpoint> checkpoint;
  api::LoadOptions load;
};

// A usage problem of the numeric options, or empty.
// (The load options' bounds are api::CheckLoadOptions', checked in LoadOptionsOf.)
std::string OptionProblem(const RunCliOptions& o) {
  constexpr double kMaxMib = 1 << 20;  // bytes that fit 64 bits: CheckLoadOptions says the rest
  const double chunk_mib = o.chunk_mib.value_or(1);
  if (!(chunk_mib > 0 && chunk_mib <= kMaxMib) || !(o.read_mib >= 0 && o.read_mib <= kMaxMib))
    return "--chunk-mib and --read-mib must be in (0, 1048576] MiB";
  if (o.repeat == 0) return "--repeat must be at least 1";
  if (o.checkpoint.empty()) return "--checkpoint DIR is required";
  return {};
}

// The checkpoint, preflighted against the plan.
Outcome<std::unique_ptr<backend::Checkpoint>> OpenCheckpoint(const RunCliOptions& o,
                                                             const simulator::LoadPlan& plan) {
  using Opened = Outcome<std::unique_ptr<backend::Checkpoint>>;
  base::Result<std::unique_ptr<backend::Checkpoint>> opened =
      backend::Checkpoint::Open(o.checkpoint);
  if (!opened.ok()) return Opened::Exit(Fail(2, opened.status().message()));
  const base::Status problems = backend::Preflight(plan, **opened);
  for (const std::string& p : base::StatusLines(problems))
    std::fprintf(stderr, "loadplan run: %s\n", p.c_str());
  if (!problems.ok()) return Opened::Exit(1);
  return std::move(*opened);
}

// --machine's profile, or none without it (exit 2 when it cannot be read).
Outcome<std::optional<simulator::timing::MachineProfile>> MachineOf(const RunCliOptions& o) {
  using Machine = Outcome<std::optional<simulator::timing::MachineProfile>>;
  if (o.machine.empty()) return std::optional<simulator::timing::MachineProfile>();
  base::Result<simulator::timing::MachineProfile> p = api::ReadMachineOption(o.machine);
  if (!p.ok()) return Machine::Exit(Fail(2, p.status().message()));
  return std::optional(std::move(*p));
}

Outcome<api::LoadOptions> LoadOptionsOf(
    const RunCliOptions& o, const std::optional<simulator::timing::MachineProfile>& machine) {
  api::LoadOptions load{.device = o.device,
                        .read_bytes = static_cast<uint64_t>(std::llround(o.read_mib * (1 << 20))),
                        .derive = !o.no_derive,
                        .direct_io = o.direct,
                        .slice_read = *simulator::timing::SliceReadOf(o.slice_read)};
  std::optional<uint64_t> chunk;
  if (o.chunk_mib) chunk = static_cast<uint64_t>(std::llround(*o.chunk_mib * (1 << 20)));
  api::ApplyMachine(machine ? &*machine : nullptr, o.io_threads, chunk, load);
  if (base::Status st = api::CheckLoadOptions(load); !st.ok())
    return Outcome<api::LoadOptions>::Exit(Fail(2, st.message()));
  if (o.memory_limit) {
    load.memory_limit = simulator::ParseByteSize(*o.memory_limit);
    if (!load.memory_limit) {
      return Outcome<api::LoadOptions>::Exit(
          Fail(2, "--memory-limit: not a size: " + *o.memory_limit));
    }
  }
  return load;
}

// --reserve, or the CUDA context and module overhead calibrate measured: on --machine's
// machine, else on the H200.
Outcome<uint64_t> ReserveOf(const RunCliOptions& o,
                            const std::optional<simulator::timing::MachineProfile>& machine) {
  if (!o.reserve) {
    return machine ? machine->context_device_bytes
                   : simulator::timing::DefaultH200Profile().context_device_bytes;
  }
  const std::optional<uint64_t> bytes = simulator::ParseByteSize(*o.reserve);
  if (!bytes) return Outcome<uint64_t>::Exit(Fail(2, "--reserve: not a size: " + *o.reserve));
  return *bytes;
}

// Before the first allocation: the plan's device bytes and the reserve against what the device
// has free now (this process's context already counted); exit 3 when they do not fit.
// api::CheckRoom, Python's load() check too, with the CLI's hint.
int CheckRoom(const RunCliOptions& o, const simulator::LoadPlan& plan, run::Report& r) {
  const base::Result<api::DeviceRoom> room = api::CheckRoom(plan, o.device, r.reserve);
  if (!room.ok()) {
    const bool short_of_room = room.status().kind() == base::ErrorKind::kOutOfMemory;
    return Fail(3, room.status().message() +
                       (short_of_room ? " (--reserve, the default calibrate's measurement; "
                                        "--reserve 0 loads anyway)"
                                      : ""));
  }
  r.free_before = room->free;
  r.total = room->total;
  return 0;
}

// Manifest, plan, checkpoint and options, or the exit code (its reason printed). `text`: the
// manifest's text as ChooseStageOf read it (empty: read it here).
Outcome<Setup> Prepare(const RunCliOptions& o,
                       const std::optional<simulator::timing::MachineProfile>& machine,
                       std::string text) {
  if (const std::string problem = OptionProblem(o); !problem.empty())
    return Outcome<Setup>::Exit(Fail(2, problem));
  Outcome<api::LoadOptions> load = LoadOptionsOf(o, machine);  // usage before the manifest
  if (!load.ok()) return Outcome<Setup>::Exit(load.exit_code());
  Outcome<CheckedInput> in = LoadVerified(o.manifest, {.command = "loadplan run"}, std::move(text));
  if (!in.ok()) return Outcome<Setup>::Exit(in.exit_code());
  simulator::PlanOptions po = o.plan;
  po.naive = o.naive;
  Outcome<simulator::LoadPlan> plan = PlanChecked(*in->check.result.verified, po, "loadplan run");
  if (!plan.ok()) return Outcome<Setup>::Exit(plan.exit_code());
  Outcome<std::unique_ptr<backend::Checkpoint>> checkpoint = OpenCheckpoint(o, *plan);
  if (!checkpoint.ok()) return Outcome<Setup>::Exit(checkpoint.exit_code());
  return Setup{.manifest = std::move(*in->check.result.verified),
               .plan = std::make_shared<const simulator::LoadPlan>(std::move(*plan)),
               .checkpoint = std::move(*checkpoint),
               .load = std::move(*load)};
}

run::Report BaseReport(const RunCliOptions& o, const Setup& s) {
  const simulator::LoadPlan& plan = *s.plan;
  run::Report r{.manifest = plan.manifest_name,
                .checkpoint = o.checkpoint,
                .mode = o.naive ? "naive" : "staged",
                .derive = !o.no_derive,
                .direct = o.direct,
                .slice_read = o.slice_read,
                .lanes = plan.lanes,
                .prefetch = plan.prefetch,
                .io_threads = s.load.io_threads,
                .chunk_bytes = s.load.chunk_bytes,
                .read_bytes = s.load.read_bytes,
                .placement = std::string(simulator::PlacementPolicyName(plan.placement))};
  r.resident_rounded = plan.resident_bytes_rounded;
  r.arena_rounded = plan.arena_bytes_rounded;
  r.lower_bound = plan.lower_bound;
  r.granularity = plan.granularity;
  r.predicted_peak = simulator::LoadPeakBytes(plan);
  r.naive_peak = simulator::ComputePhases(s.manifest.manifest(), plan).naive_peak;
  r.checkpoint_bytes = s.checkpoint->TotalBytes();
  r.fill_bytes = simulator::FillBytes(plan);
  for (simulator::BufferId i : simulator::DerivedCarries(plan))
    r.derived_bytes += plan.buffer(i).bytes;
  return r;
}

// One load into a fresh model, which comes back (for --check, --save-derived); or the exit code.
Outcome<api::LoadedModel> LoadOnce(const Setup& s, uint32_t index, run::Report& report,
                                   std::stop_token stop) {
  api::LoadOptions options = s.load;
  options.stop = std::move(stop);
  auto bar = std::make_shared<ProgressBar>(fmt::format("load {}", index + 1));
  options.progress = [bar, ended = false](uint64_t done, uint64_t total) mutable {
    if (ended) return;
    ended = done >= total;
    bar->Update(done, total);
  };
  base::Result<api::LoadedModel> loaded = api::LoadPlanned(s.plan, *s.checkpoint, options);
  if (!loaded.ok()) return Outcome<api::LoadedModel>::Exit(FailStatus(3, loaded.status()));
  report.runs.push_back({.memory = loaded->report().memory, .times = loaded->report().times});
  return std::move(*loaded);
}

size_t MedianRun(const std::vector<run::Measurement>& runs) {
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return runs[a].times.wall_s < runs[b].times.wall_s; });
  return order[order.size() / 2];
}

// The tensors the plan fills: the probes read what this load reads (a deployment's stage reads
// only its own tensors of a checkpoint that holds every stage's).
backend::TensorSet FilledTensors(const simulator::LoadPlan& plan) {
  backend::TensorSet out;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    for (std::string_view t : simulator::BoundTensors(b)) out.insert(std::string(t));
  }
  return out;
}

void Probe(const RunCliOptions& o, const Setup& s, run::Report& r) {
  const backend::TensorSet tensors = FilledTensors(*s.plan);
  r.host_read =
      backend::ProbeHostRead(*s.checkpoint, s.load.io_threads, s.load.chunk_bytes, &tensors);
  r.h2d = backend::ProbePinnedH2D(uint64_t{1} << 30, 4, o.device);
  r.shared = backend::ProbeH2DBesideHostRead(*s.checkpoint, s.load.io_threads, s.load.chunk_bytes,
                                             4, o.device, &tensors);
  r.host_copy = backend::ProbeHostCopy(uint64_t{1} << 30, s.load.io_threads);
}

// What the manifest argument names (api::ResolveSource, as Python's load()): a deployment
// file's stage for this process (RANK on GPU LOCAL_RANK, from the launcher's environment;
// --save-derived goes to a folder of its own per stage), or the manifest itself. A model folder
// is imported first (`loadplan import`), as the error says. `text`: a manifest's text, read
// while telling it from a deployment (Prepare verifies it without reading the file again).
// 0, or the exit code.
int ChooseStageOf(RunCliOptions& o, std::optional<api::StageChoice>& stage, std::string& text) {
  if (o.manifest.empty()) return 0;  // the embedded example
  base::Result<api::LoadSource> source = api::ResolveSource(o.manifest, std::nullopt, o.device);
  if (!source.ok()) return Fail(2, source.status().message());
  if (!source->folder.empty()) {
    return Fail(2, fmt::format("{} is a model folder: make its manifest with `loadplan import "
                               "{} -o MANIFEST` and run that (Python's load() imports it itself)",
                               o.manifest, o.manifest));
  }
  if (!source->stage) {
    text = std::move(source->text);
    return 0;
  }
  o.manifest = source->manifest;
  o.device = source->device;
  if (!o.save_derived.empty())
    o.save_derived = fmt::format("{}/stage-{}", o.save_derived, source->stage->stage);
  stage = std::move(source->stage);
  return 0;
}

}  // namespace

namespace {

// --repeat loads in a row, each after the one before freed its device memory; the last stays
// in `gpu` for --check and --save-derived. 0, or the exit code.
int LoadRepeatedly(const RunCliOptions& o, const Setup& s, Clock::time_point t0,
                   const InterruptWatch& interrupt, run::Report& report,
                   std::optional<api::LoadedModel>& gpu) {
  for (uint32_t i = 0; i < o.repeat; ++i) {
    gpu.reset();  // the previous load's device memory goes before the next load asks for it
    const auto call = Clock::now();
    if (i == 0) report.process.to_load_s = std::chrono::duration<double>(call - t0).count();
    Outcome<api::LoadedModel> loaded = LoadOnce(s, i, report, interrupt.token());
    if (i == 0) report.process.first_call_s = base::SecondsSince(call);
    if (!loaded.ok()) return loaded.exit_code();
    gpu.emplace(std::move(*loaded));
  }
  report.median = MedianRun(report.runs);
  return 0;
}

// --check (the host backend's bytes beside the GPU's) and --save-derived on the last load:
// 0, or --save-derived's exit code (the report is still printed).
int CheckAndSave(const RunCliOptions& o, const Setup& s, const api::LoadedModel& gpu,
                 const InterruptWatch& interrupt, run::Report& report) {
  const backend::ReadResident read = [&gpu](simulator::BufferId b, uint64_t offset,
                                            std::span<uint8_t> out) {
    return gpu.CopyOut(b, offset, out);
  };
  if (o.check) report.check = backend::CompareWithHost(*s.plan, *s.checkpoint, read, !o.no_derive);
  if (o.save_derived.empty() || interrupt.interrupted()) return 0;
  base::Result<std::string> saved =
      backend::SaveDerived(*s.plan, read, o.save_derived, {.stop = interrupt.token()});
  if (!saved.ok()) return FailStatus(2, saved.status());
  report.saved = *saved;
  return 0;
}

}  // namespace

int RunRun(const RunCliOptions& given) {
  const auto t0 = Clock::now();
  const double start_unix_s = base::UnixSeconds();
  RunCliOptions o = given;
  std::optional<api::StageChoice> stage;
  std::string text;  // the manifest's, read once
  if (const int rc = ChooseStageOf(o, stage, text); rc != 0) return rc;
  backend::PrepareCudaProcess();  // before the first CUDA call
  const Outcome<std::optional<simulator::timing::MachineProfile>> machine = MachineOf(o);
  if (!machine.ok()) return machine.exit_code();
  const Outcome<uint64_t> reserve = ReserveOf(o, *machine);
  if (!reserve.ok()) return reserve.exit_code();
  // The CUDA context starts beside parsing and planning (which make no CUDA call); a failed
  // preparation waits for it (the future's end), then exits.
  std::future<base::Result<double>> context =
      std::async(std::launch::async, backend::StartDevice, o.device);
  Outcome<Setup> prepared = Prepare(o, *machine, std::move(text));
  const double prepare_s = base::SecondsSince(t0);
  if (!prepared.ok()) return prepared.exit_code();
  const Setup& s = *prepared;
  const base::Result<double> started = context.get();
  if (!started.ok()) return Fail(3, started.status().message());
  run::Report report = BaseReport(o, s);
  report.stage = stage;
  report.reserve = *reserve;
  report.process = {.context_s = *started, .prepare_s = prepare_s, .start_unix_s = start_unix_s};
  if (const int rc = CheckRoom(o, *s.plan, report); rc != 0) return rc;
  if (o.ceilings) Probe(o, s, report);
  const InterruptWatch interrupt;  // from here Ctrl-C cancels (exit 130), a second one kills
  std::optional<api::LoadedModel> gpu;
  if (const int rc = LoadRepeatedly(o, s, t0, interrupt, report, gpu); rc != 0) return rc;
  const int rc = CheckAndSave(o, s, *gpu, interrupt, report);
  // The host comparison does not poll the stop: a Ctrl-C during it ends the run here.
  if (interrupt.interrupted()) return Fail(kExitInterrupted, "cancelled (Ctrl-C)");
  const auto freeing = Clock::now();
  gpu.reset();  // the last model's device memory, before the report (the process ends next)
  report.process.free_s = base::SecondsSince(freeing);
  report.process.report_unix_s = base::UnixSeconds();
  if (o.format == Format::kJson) {
    run::PrintJson(report);
  } else {
    run::PrintText(report);
  }
  if (rc != 0) return rc;
  return (report.check && !report.check->ok()) || !report.PeakMatches() ? 1 : 0;
}

}  // namespace loadplan::cli
