// Internals of `loadplan run` shared by its files: the report and its printers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/launch.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/load_output.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/measure/probe.h"
#include "backend/measure/host_copy_probe.h"
#include "cli/cmd_run.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::cli::run {

using CheckSummary = backend::HostComparison;

struct Measurement {
  backend::CudaMemory memory;
  backend::CudaTimes times;
};

// Where a `loadplan run` process spends its time outside the loads (docs/performance.md).
struct ProcessTimes {
  double context_s = 0;     // the CUDA context, started on its own thread at the command's start
  double prepare_s = 0;     // parse, verify, plan, self-check, open and preflight the checkpoint
  double to_load_s = 0;     // the command's start to the first load's call (both of the above)
  double first_call_s = 0;  // the first load's API call: backend set-up, the load, its finish
  double free_s = 0;        // freeing the last load's model, after --check and --save-derived
  // The system clock at the command's start and just before the report is printed: against a
  // wall clock read outside the process they split its exec (before) from its exit (after).
  double start_unix_s = 0, report_unix_s = 0;
};

struct Report {
  std::string manifest, checkpoint, mode;  // mode: "staged" | "naive"
  bool derive = true;
  bool direct = false;     // --direct: O_DIRECT reads
  std::string slice_read;  // --slice-read: auto, runs, span or map
  uint32_t lanes = 1, prefetch = 0, io_threads = 0;
  uint64_t chunk_bytes = 0;
  uint64_t read_bytes = 0;  // pread size within a chunk (0: one pread per chunk)
  std::string placement;
  uint64_t resident_rounded = 0, arena_rounded = 0, lower_bound = 0, granularity = 0;
  uint64_t predicted_peak = 0, naive_peak = 0;
  uint64_t reserve = 0;                 // --reserve, or the measured context overhead
  uint64_t free_before = 0, total = 0;  // the device before the load (cudaMemGetInfo)
  uint64_t checkpoint_bytes = 0, fill_bytes = 0, derived_bytes = 0;
  std::vector<Measurement> runs;
  size_t median = 0;  // index into runs (median wall time)
  std::optional<base::Result<backend::Throughput>> h2d, host_read, host_copy;
  std::optional<base::Result<backend::SharedCeilings>> shared;  // H2D beside the host read
  std::optional<CheckSummary> check;
  std::string saved;  // the file --save-derived wrote
  ProcessTimes process;
  std::optional<api::StageChoice> stage;  // a deployment's stage (run DEPLOY.json under a launcher)
  [[nodiscard]] bool PeakMatches() const;
};

void PrintText(const Report& r);
void PrintJson(const Report& r);

}  // namespace loadplan::cli::run
