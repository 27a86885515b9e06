// The CUDA backend: one cudaMalloc for the resident pool and one for the staging arena,
// fills read in chunks by a pool of I/O threads (pinned double buffers, one stream each),
// derive kernels on a compute stream, every plan wait edge followed with CUDA events.
// docs/runtime.md describes the design and what is measured. Plain C++ header (no CUDA types).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/cuda/device_allocation.h"
#include "backend/load_defaults.h"
#include "simulator/plan.h"
#include "simulator/timing/slice_read.h"
#include "verifier/manifest.h"

namespace loadplan::backend {

struct CudaOptions {
  uint32_t io_threads = kDefaultIoThreads;  // backend/load_defaults.h
  uint64_t chunk_bytes = kDefaultChunkBytes;
  // 0: one pread per chunk; else each chunk is read by preads of at most this many bytes
  // (buffered reads only), its copy still one: the copy size apart from the read size.
  uint64_t read_bytes = 0;
  std::optional<uint64_t> memory_limit;  // cap on the backend's device bytes (tests force OOM)
  std::optional<uint32_t> fail_at_allocation;  // fault injection: 0 the resident pool, 1 the arena
  std::optional<uint32_t> fail_at_step;  // fault injection: this plan step fails before it runs
  IoFaults io_faults;  // fault injection into the checkpoint reads (a test seam, never user-set)
  int device = 0;
  bool derive = true;  // false: launches only keep the order (loads without deriving)
  // Read with O_DIRECT (a second descriptor of each file, whole 4 KiB blocks): around the page
  // cache, for files that are not in it. kIo at the first fill where the filesystem refuses.
  bool direct_io = false;
  // A slice along a dimension > 0 (its runs strided in the file): read run by run, its
  // covering span and gathered, or its pages mapped (simulator/timing/slice_read.h); kAuto
  // chooses per slice from `slice_costs` (its threads are io_threads; the map only when the
  // reads are buffered). Runs of a chunk or more are read each as a fill.
  simulator::timing::SliceRead slice_read = simulator::timing::SliceRead::kAuto;
  simulator::timing::SliceReadCosts slice_costs;
  // Bytes enqueued to the device so far and the plan's fill total; called on the caller's thread.
  std::function<void(uint64_t, uint64_t)> progress;
  // Cancellation from any thread: the next step, or the wait of FreeArena/Finish (within
  // about 100 ms), stops with ErrorKind::kCancelled; queued reads are skipped.
  std::stop_token stop;
};

// Device memory as measured. `allocated` counts the backend's own cudaMalloc bytes (the
// pool and the arena, sizes as the plan rounded them); `used_delta` is cudaMemGetInfo's
// drop in free bytes from the baseline taken after context creation, eager module loading,
// stream creation and pinned-buffer allocation.
struct CudaMemory {
  uint64_t peak_allocated = 0;
  uint64_t peak_used_delta = 0;
  uint64_t baseline_free = 0;
  uint64_t total = 0;
};

// Seconds. read_s: pread time per I/O thread (sum / threads); copy_s: device time of the
// host-to-device copies per stream (sum / threads); derive_s: device time of the derive
// kernels on the compute stream; wall_s: from the first fill to the last work done
// (Finish), context creation and allocation excluded; started_unix_s: its start on the system
// clock (Unix seconds), so the loads of several processes (a deployment's ranks) line up.
// job_wait_s: per I/O thread, its waits for a job after its first chunk (the pool starved);
// submit_s: the plan's thread inside Fill (locating, cutting and queueing every fill).
// Per I/O thread too: start_s, from the first fill queued to its first chunk; end_s, from its
// last chunk queued to the load's last drain; enqueue_s, from each chunk read to its copy queued
// (the wait for the steps its fill waits for: the lane's fill before, the launches that last
// read a source's arena bytes; then the CUDA calls).
struct CudaTimes {
  double read_s = 0, copy_s = 0, slot_wait_s = 0, derive_s = 0, wall_s = 0;
  double job_wait_s = 0, submit_s = 0;
  double start_s = 0, end_s = 0, enqueue_s = 0;
  double started_unix_s = 0;
  uint64_t bytes_filled = 0;
  uint64_t file_bytes = 0;  // read from the files (a slice read as a span reads more)
  uint64_t chunks = 0;
  uint64_t reads = 0;           // preads (direct reads) issued
  uint32_t slices_as_runs = 0;  // slices along a dimension > 0 read run by run
  uint32_t slices_as_span = 0;  // ... read as their covering span
  uint32_t slices_as_map = 0;   // ... copied out of a mapping of their pages
  uint32_t launches = 0;
};

class CudaBackend final : public Backend {
 public:
  using CreateResult = base::Result<std::unique_ptr<CudaBackend>>;
  // Binds to the device, creates the streams and the I/O pool, takes the memory baseline.
  // Refuses (before any device allocation) a plan whose bindings or kernel contracts do not
  // match (Preflight). `plan` and `checkpoint` must outlive the backend.
  static CreateResult Create(const simulator::LoadPlan& plan, const Checkpoint& checkpoint,
                             CudaOptions options = {});
  static CreateResult Create(simulator::LoadPlan&&, const Checkpoint&, CudaOptions = {}) = delete;
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  Status AllocateResident(uint64_t bytes, const StepContext& at) override;
  Status AllocateArena(uint64_t bytes, const StepContext& at) override;
  Status Fill(const simulator::PlannedBuffer& buffer, simulator::Lane lane,
              const StepContext& at) override;
  Status Launch(const simulator::PlannedCall& call, const StepContext& at) override;
  Status Release(const simulator::PlannedBuffer& buffer, const StepContext& at) override;
  Status FreeArena(const StepContext& at) override;
  // Waits for every fill and launch; the first asynchronous error (a read, a copy, a kernel).
  // The executor calls it after the last step; it stops the wall clock.
  Status Finish() override;
  Status FreeResident() override;
  uint64_t LiveBytes() const override;
  uint64_t PeakBytes() const override;

  // Copies [offset, offset + out.size()) of resident buffer `buffer` to the host.
  Status CopyOut(simulator::BufferId buffer, uint64_t offset, std::span<uint8_t> out) const;
  Status CopyOut(simulator::BufferId buffer, std::vector<uint8_t>& out) const;

  // After a successful Execute: the resident pool (every weight and carry at its plan offset)
  // leaves the backend, which frees it no more; the caller owns it from here.
  [[nodiscard]] base::Result<DeviceAllocation> TakeResident();

  [[nodiscard]] CudaMemory Memory() const;
  [[nodiscard]] CudaTimes Times() const;  // complete after Finish

 private:
  struct Impl;
  explicit CudaBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Ok when device `device` is usable; else kDevice saying why not ("no CUDA device
// (cudaErrorInsufficientDriver)").
Status DeviceUsable(int device = 0);

// Sets CUDA_MODULE_LOADING=EAGER (unless already set) so that every kernel module loads at
// context creation, before the memory baseline. Call before the process's first CUDA call.
void PrepareCudaProcess();

}  // namespace loadplan::backend
