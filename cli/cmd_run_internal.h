// Internals of `loadplan run` shared by its files: the report, the host check and the saver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/checkpoint.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/probe.h"
#include "cli/cmd_run.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::cli::run {

struct CheckSummary {
  std::string host_error;               // the host backend's own failure, if any
  uint32_t compared = 0;                // buffers compared
  uint64_t bytes = 0;                   // bytes compared
  std::vector<std::string> mismatches;  // "l0.fc1_w: first difference at byte 4096"
  [[nodiscard]] bool ok() const { return host_error.empty() && mismatches.empty(); }
};

struct Measurement {
  backend::CudaMemory memory;
  backend::CudaTimes times;
};

struct Report {
  std::string manifest, checkpoint, mode;  // mode: "staged" | "naive"
  bool derive = true;
  uint32_t lanes = 1, prefetch = 0, io_threads = 0;
  uint64_t chunk_bytes = 0;
  std::string placement;
  uint64_t resident_rounded = 0, arena_rounded = 0, lower_bound = 0, granularity = 0;
  uint64_t predicted_peak = 0, naive_peak = 0;
  uint64_t checkpoint_bytes = 0, fill_bytes = 0, derived_bytes = 0;
  std::vector<Measurement> runs;
  size_t median = 0;  // index into runs (median wall time)
  std::optional<backend::ProbeResult> h2d, host_read;
  std::optional<CheckSummary> check;
  std::string saved;  // the file --save-derived wrote
  [[nodiscard]] bool PeakMatches() const;
};

// Plan indices of the carries written by derive calls, and of the weights.
std::vector<uint32_t> DerivedCarries(const simulator::LoadPlan& plan);
std::vector<uint32_t> Weights(const simulator::LoadPlan& plan);

// Runs the host backend on the same plan and compares the weights and (with derive) every
// derived carry byte for byte with the GPU's copy.
CheckSummary CompareWithHost(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                             const backend::Checkpoint& ckpt, const backend::CudaBackend& gpu, bool derive);

// Writes every derived carry into DIR/derived.safetensors; returns the error or "".
std::string SaveDerived(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                        const backend::CudaBackend& gpu, const std::string& dir, std::string& path);

void PrintText(const Report& r);
void PrintJson(const Report& r);

}  // namespace loadplan::cli::run
