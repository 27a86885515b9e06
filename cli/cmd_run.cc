// `loadplan run`: verify, plan, preflight the checkpoint, load it with the CUDA backend, report.
#include "cli/cmd_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/load_output.h"
#include "backend/preflight.h"
#include "base/status_lines.h"
#include "cli/cmd_run_internal.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "simulator/phases/phases.h"
#include "simulator/plan_totals.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

using backend::CudaBackend;
using backend::Status;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "loadplan run: %s\n", message.c_str());
  return code;
}

struct Setup {
  verifier::VerifiedManifest manifest;
  simulator::LoadPlan plan;
  std::unique_ptr<backend::Checkpoint> checkpoint;
  backend::CudaOptions cuda;
};

// A usage problem of the numeric options, or empty.
std::string OptionProblem(const RunCliOptions& o) {
  if (o.io_threads == 0 || o.io_threads > 1024) return "--io-threads must be in [1, 1024]";
  if (!(o.chunk_mib * 1024 >= 4) || o.chunk_mib > 1024)
    return "--chunk-mib must be in [4 KiB, 1024 MiB]";
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

Outcome<backend::CudaOptions> CudaOptionsOf(const RunCliOptions& o) {
  backend::CudaOptions cuda{
      .io_threads = o.io_threads,
      .chunk_bytes = static_cast<uint64_t>(std::llround(o.chunk_mib * (1 << 20))),
      .device = o.device,
      .derive = !o.no_derive};
  if (o.memory_limit) {
    cuda.memory_limit = simulator::ParseByteSize(*o.memory_limit);
    if (!cuda.memory_limit) {
      return Outcome<backend::CudaOptions>::Exit(
          Fail(2, "--memory-limit: not a size: " + *o.memory_limit));
    }
  }
  return cuda;
}

// Manifest, plan, checkpoint and options, or the exit code (its reason printed).
Outcome<Setup> Prepare(const RunCliOptions& o) {
  if (const std::string problem = OptionProblem(o); !problem.empty())
    return Outcome<Setup>::Exit(Fail(2, problem));
  Outcome<CheckedInput> in = LoadVerified(o.manifest, {.command = "loadplan run"});
  if (!in.ok()) return Outcome<Setup>::Exit(in.exit_code());
  simulator::PlanOptions po = o.plan;
  po.naive = o.naive;
  Outcome<simulator::LoadPlan> plan = PlanChecked(*in->check.result.verified, po, "loadplan run");
  if (!plan.ok()) return Outcome<Setup>::Exit(plan.exit_code());
  Outcome<std::unique_ptr<backend::Checkpoint>> checkpoint = OpenCheckpoint(o, *plan);
  if (!checkpoint.ok()) return Outcome<Setup>::Exit(checkpoint.exit_code());
  Outcome<backend::CudaOptions> cuda = CudaOptionsOf(o);
  if (!cuda.ok()) return Outcome<Setup>::Exit(cuda.exit_code());
  return Setup{.manifest = std::move(*in->check.result.verified),
               .plan = std::move(*plan),
               .checkpoint = std::move(*checkpoint),
               .cuda = std::move(*cuda)};
}

run::Report BaseReport(const RunCliOptions& o, const Setup& s) {
  run::Report r{.manifest = s.plan.manifest_name,
                .checkpoint = o.checkpoint,
                .mode = o.naive ? "naive" : "staged",
                .derive = !o.no_derive,
                .lanes = s.plan.lanes,
                .prefetch = s.plan.prefetch,
                .io_threads = s.cuda.io_threads,
                .chunk_bytes = s.cuda.chunk_bytes,
                .placement = std::string(simulator::PlacementPolicyName(s.plan.placement))};
  r.resident_rounded = s.plan.resident_bytes_rounded;
  r.arena_rounded = s.plan.arena_bytes_rounded;
  r.lower_bound = s.plan.lower_bound;
  r.granularity = s.plan.granularity;
  r.predicted_peak = simulator::LoadPeakBytes(s.plan);
  r.naive_peak = simulator::ComputePhases(s.manifest.manifest(), s.plan).naive_peak;
  r.checkpoint_bytes = s.checkpoint->TotalBytes();
  r.fill_bytes = simulator::FillBytes(s.plan);
  for (simulator::BufferId i : simulator::DerivedCarries(s.plan))
    r.derived_bytes += s.plan.buffer(i).bytes;
  return r;
}

// One load on a fresh backend, which comes back (for --check, --save-derived); or the exit code.
Outcome<std::unique_ptr<CudaBackend>> LoadOnce(const Setup& s, uint32_t index,
                                               run::Report& report) {
  using Loaded = Outcome<std::unique_ptr<CudaBackend>>;
  backend::CudaOptions options = s.cuda;
  // Owned by the callback: the backend outlives this function.
  auto bar = std::make_shared<ProgressBar>(fmt::format("load {}", index + 1));
  options.progress = [bar, ended = false](uint64_t done, uint64_t total) mutable {
    if (ended) return;
    ended = done >= total;
    bar->Update(done, total);
  };
  CudaBackend::CreateResult created = CudaBackend::Create(s.plan, *s.checkpoint, options);
  if (!created.backend) return Loaded::Exit(Fail(3, created.status.message()));
  const backend::ExecuteResult er = backend::Execute(s.plan, *created.backend);  // done means done
  if (!er.status.ok()) {
    if (!er.cleanup.ok())
      std::fprintf(stderr, "loadplan run: cleanup: %s\n", er.cleanup.message().c_str());
    return Loaded::Exit(Fail(3, er.status.message()));
  }
  report.runs.push_back({.memory = created.backend->Memory(), .times = created.backend->Times()});
  return std::move(created.backend);
}

size_t MedianRun(const std::vector<run::Measurement>& runs) {
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return runs[a].times.wall_s < runs[b].times.wall_s; });
  return order[order.size() / 2];
}

void Probe(const RunCliOptions& o, const Setup& s, run::Report& r) {
  r.host_read = backend::ProbeHostRead(*s.checkpoint, s.cuda.io_threads, s.cuda.chunk_bytes);
  r.h2d = backend::ProbePinnedH2D(uint64_t{1} << 30, 4, o.device);
}

}  // namespace

int RunRun(const RunCliOptions& o) {
  backend::PrepareCudaProcess();  // before the first CUDA call
  Outcome<Setup> prepared = Prepare(o);
  if (!prepared.ok()) return prepared.exit_code();
  const Setup& s = *prepared;
  if (const std::string why = backend::NoDeviceReason(o.device); !why.empty()) return Fail(3, why);
  run::Report report = BaseReport(o, s);
  if (o.ceilings) Probe(o, s, report);
  std::unique_ptr<CudaBackend> gpu;
  for (uint32_t i = 0; i < o.repeat; ++i) {
    gpu.reset();  // the previous load's device memory goes before the next load asks for it
    Outcome<std::unique_ptr<CudaBackend>> loaded = LoadOnce(s, i, report);
    if (!loaded.ok()) return loaded.exit_code();
    gpu = std::move(*loaded);
  }
  report.median = MedianRun(report.runs);
  const backend::ReadResident read = [&gpu](simulator::BufferId b, uint64_t offset,
                                            std::span<uint8_t> out) {
    return gpu->CopyOut(b, offset, out);
  };
  if (o.check) report.check = backend::CompareWithHost(s.plan, *s.checkpoint, read, !o.no_derive);
  int rc = 0;
  if (!o.save_derived.empty()) {
    base::Result<std::string> saved = backend::SaveDerived(s.plan, read, o.save_derived);
    if (saved.ok())
      report.saved = *saved;
    else
      rc = Fail(2, saved.status().message());
  }
  if (o.format == Format::kJson) {
    run::PrintJson(report);
  } else {
    run::PrintText(report);
  }
  if (rc != 0) return rc;
  return (report.check && !report.check->ok()) || !report.PeakMatches() ? 1 : 0;
}

}  // namespace loadplan::cli
