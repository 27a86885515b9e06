// The CUDA backend's state (private to backend/cuda): device memory, streams, the I/O pool,
// per-step events and the measurements.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/file_read.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/io_pool.h"
#include "backend/cuda/step_events.h"

namespace loadplan::backend {

struct CudaBackend::Impl {
  using Clock = std::chrono::steady_clock;
  // An I/O thread's error surfaces at the next step that looks; the cleanup after that
  // failure must not report it a second time.
  bool io_error_reported = false;
  Status ReportIo(Status st) {
    io_error_reported = true;
    return st;
  }

  Impl(const simulator::LoadPlan& p, const Checkpoint& c, CudaOptions o)
      : plan(p),
        checkpoint(c),
        options(std::move(o)),
        faults(options.io_faults),
        steps(p.steps.size()) {}
  ~Impl();

  Status Init();
  Status Fault(const StepContext& at) const;
  Status Allocate(const char* what, uint64_t bytes, cuda::DeviceMemory& out);
  Status OutOfMemory(const char* what, uint64_t bytes, const std::string& reason) const;
  Status Free(cuda::DeviceMemory& memory);
  // Samples cudaMemGetInfo: the drop from the baseline, kept as a peak.
  Status SampleDelta();
  // The descriptor of `file` (opened by Checkpoint::Open); nullopt for a file not of this
  // checkpoint.
  std::optional<int> FdOf(const SafetensorsFile* file) const;
  cuda::DeviceMemory* RegionOf(const simulator::PlannedBuffer& b);
  // The strided read of `runs`: kRuns, kSpan or kMap (counted).
  simulator::timing::SliceRead ReadOf(const simulator::PlannedBuffer& buffer,
                                      const base::SliceRuns& runs);
  // A strided slice's requests (FillRequests): one of whole runs per chunk, or one per run.
  void AddStrided(const simulator::PlannedBuffer& buffer, const base::SliceRuns& runs,
                  const cuda::FillRequest& first, std::vector<cuda::FillRequest>& out);
  // The I/O requests of a fill of `buffer` at `dst`: one per part (LocateFill's: a whole
  // tensor is one run; a slice's strided runs one strided request, runs, span or map as
  // ReadOf says, or one request per run when each is a chunk or more), each at the
  // bytes of the parts before it; kInternal for a file not of this checkpoint.
  base::Result<std::vector<cuda::FillRequest>> FillRequests(const simulator::PlannedBuffer& buffer,
                                                            const std::vector<FillPart>& parts,
                                                            const StepContext& at, uint8_t* dst);
  uint8_t* Address(simulator::BufferId buffer);
  Status CheckUses(const simulator::PlannedCall& call);
  void Progress() const;
  // Progress, and the first time a stop is requested, the I/O pool's cancel (while waiting).
  void Tick();
  Status Cancelled() const;

  const simulator::LoadPlan& plan;
  const Checkpoint& checkpoint;
  CudaOptions options;
  IoFaultState faults;  // the test seam's read counter, shared by the I/O threads
  cuda::StepEvents steps;
  cuda::Stream compute;
  cuda::DeviceMemory pool, arena;
  std::vector<std::pair<cuda::Event, cuda::Event>> launch_events;  // timing: start, end
  uint64_t live = 0, peak = 0;
  uint32_t allocations = 0;
  cuda::MemInfo baseline;
  uint64_t peak_delta = 0;
  uint64_t fill_total = 0;     // bytes of every fill step of the plan
  bool cancelled = false;      // a stop was requested and the I/O pool cancelled
  bool files_checked = false;  // Checkpoint::CheckUnchanged ran before the first read
  std::optional<Clock::time_point> first_fill;
  double first_fill_unix_s = 0;  // the same moment on the system clock
  double wall_s = 0, derive_s = 0;
  double submit_s = 0;  // in Fill: locating, cutting and queueing the fills
  uint32_t slices_as_runs = 0, slices_as_span = 0, slices_as_map = 0;
  std::unique_ptr<cuda::IoPool> io;  // last: destroyed first (joins its threads)
};

}  // namespace loadplan::backend
