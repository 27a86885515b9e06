// The I/O thread pool of the CUDA backend: every fill is cut into chunks (4 MiB by default)
// that a pool of threads reads with pread (ReadExact) into pinned double buffers and copies to the
// device with cudaMemcpyAsync, each thread on its own stream. One fill therefore runs on all
// threads at once: throughput comes from the pool, not from the plan's lanes.
//
//   Submit(fill) -> queue of jobs -> thread k: take next chunk of the front job
//      wait until slot s of k is free (its last copy's event) -> pread into slot s
//      first chunk of this job on k: wait (host) for the fill's wait steps to be published,
//        cudaStreamWaitEvent(stream k, each of their events)
//      cudaMemcpyAsync(dst + off, slot s, stream k); record slot s's events; record the
//      job's event of thread k
//   last chunk of a job enqueued -> StepEvents::Publish(step, events of the threads it used)
//   (SubmitParts: several jobs of one step; the last part's end publishes every part's events)
//
// Strided requests (a slice along a dimension > 0: `run_bytes` set, runs `stride` apart in the
// file, packed one after another on the device): each chunk is whole runs. Runs mode (`span`
// false) reads each run with its own pread into the slot, packed, and copies the chunk in one
// cudaMemcpyAsync; span mode reads the chunk's covering bytes in one go (direct mode too) and
// gathers the runs on the way to the device with one cudaMemcpy2DAsync (source pitch `stride`).
//
// Direct mode (`direct`): each file is read through a second, O_DIRECT descriptor of the same
// inode (DirectFile, opened at its first Submit) in whole 4 KiB blocks (ReadDirect); a slot
// holds a chunk plus its skew, and the copy starts at the chunk's first byte in the slot.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/checkpoint/file_read.h"
#include "backend/checkpoint/mapped_read.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/step_events.h"

namespace loadplan::backend::cuda {

struct FillRequest {
  simulator::StepIndex step{};              // the plan step; published when every chunk is enqueued
  std::vector<simulator::StepIndex> waits;  // steps whose events the copies wait for
  FileRef file;                             // read with pread (ReadExact)
  std::string tensor;                       // the checkpoint tensor, for read errors
  uint64_t file_offset = 0;                 // the request's first byte in the file
  uint64_t tensor_offset = 0;      // ... and in its tensor (a slice's run starts inside it)
  IoFaultState* faults = nullptr;  // the test seam (null: none)
  uint8_t* dst = nullptr;          // device address
  uint64_t bytes = 0;
  std::string what;  // "l0.fc1_w.raw from model-00001-of-00002.safetensors"
  // Strided (0: `bytes` contiguous at file_offset): bytes / run_bytes runs, the k-th at
  // file_offset + k * stride, packed at dst. At most the pool's chunk bytes each.
  uint64_t run_bytes = 0;
  uint64_t stride = 0;
  bool span = false;  // read the covering bytes and gather (else a pread per run)
  bool map = false;   // copy the runs out of a mapping of their pages (mapped_read.h)
};

struct IoStats {
  uint64_t bytes = 0;       // bytes copied to the device
  uint64_t file_bytes = 0;  // bytes read from the files (a span read takes more than it copies)
  uint64_t chunks = 0;
  uint64_t reads = 0;      // preads (or direct reads) issued
  double read_s = 0;       // pread time, summed over threads
  double copy_s = 0;       // device time of the copies (event to event), summed over streams
  double slot_wait_s = 0;  // time threads waited for a pinned slot to come free, summed
  // Time threads waited for a job after their first chunk, summed: the pool starved by its
  // submitter (or by steps that wait), never the wait after the last job.
  double job_wait_s = 0;
  // Summed over threads: from the first fill queued to a thread's first chunk (a thread that
  // took none: to the drain's end), and from its last chunk queued to the drain's end
  // (complete after Drain).
  double start_s = 0, end_s = 0;
  // Summed over threads: from a chunk read to its copy queued (the wait for the steps its
  // fill waits for to be queued: the lane's fill before, a source's arena's last readers;
  // then the CUDA calls).
  double enqueue_s = 0;
};

class IoPool {
 public:
  // Creates `threads` threads, each with a stream and two pinned buffers of `chunk_bytes`
  // (DirectBufferBytes(chunk_bytes) when `direct`). Threads bind to `device` (cudaSetDevice)
  // before their first CUDA call.
  // `read_bytes` (buffered mode; 0: chunk_bytes): each chunk is read by preads of at most this
  // many bytes, then copied in one cudaMemcpyAsync.
  static Status Create(uint32_t threads, uint64_t chunk_bytes, int device, StepEvents& steps,
                       std::unique_ptr<IoPool>& out, bool direct = false, uint64_t read_bytes = 0);
  ~IoPool();  // cancels what is queued, joins the threads, synchronises the streams
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  // Queues a fill (returns at once). A 0-byte fill is published at once. In direct mode the
  // first fill of a file opens its O_DIRECT descriptor: kIo when the filesystem refuses it.
  Status Submit(FillRequest request);
  // Queues the fills of one step (a buffer that binds several checkpoint tensors: one request
  // per tensor, each to its own bytes of the buffer); they share `step` and `waits`. The step
  // is published once, when every part's last chunk is enqueued, with the events of them all.
  // All parts are queued or, on an error, none.
  Status SubmitParts(std::vector<FillRequest> parts);
  // Blocks until every submitted job is enqueued (or skipped), then synchronises every
  // stream; `tick` is called about every 100 ms while waiting. Returns the first error, with
  // any slot that cannot be freed after it appended.
  Status Drain(const std::function<void()>& tick = {});
  // Chunks not yet taken are skipped (their steps are published without events).
  void Cancel();
  [[nodiscard]] Status error() const;
  [[nodiscard]] uint64_t BytesEnqueued() const { return bytes_enqueued_.load(); }
  [[nodiscard]] IoStats Stats() const;  // complete after Drain

 private:
  struct Job;
  struct StepJoin;
  struct Worker;
  struct Chunk {
    Job* job = nullptr;
    uint64_t offset = 0;
    uint64_t bytes = 0;
    bool skip = false;
  };

  IoPool(uint64_t chunk_bytes, uint64_t read_bytes, int device, StepEvents& steps, bool direct);
  void Run(uint32_t w);
  // The next chunk for worker `w` (false: stopped); counts its wait for one (job_wait_s).
  bool Next(uint32_t w, Chunk& c);
  Status Copy(uint32_t w, const Chunk& c);
  // Reads chunk `c` into `slot`; returns where its first byte lies in the slot (a direct
  // read's skew).
  base::Result<uint64_t> Read(Worker& k, const Chunk& c, uint8_t* slot);
  Status ReadRuns(Worker& k, const Chunk& c, uint8_t* slot);
  Status FreeSlot(Worker& k, int s);
  // Opens the job's O_DIRECT descriptor (direct mode), counts its chunks.
  Status Prepare(Job& j);
  void Finish(uint32_t w, const Chunk& c, Status st);
  // Job `j` is fully enqueued (or skipped, or had no chunk) with `events`. Called with mu_
  // held; returns the events of every part of its step when it was the step's last part.
  std::optional<std::vector<cudaEvent_t>> JobDone(Job& j, std::vector<cudaEvent_t> events);
  // Wakes as many waiting workers as `chunks` new chunks can keep busy.
  void Wake(uint64_t chunks);
  void SetError(Status st);

  const uint64_t chunk_bytes_;
  const uint64_t read_bytes_;  // at most chunk_bytes_
  const int device_;
  const bool direct_;
  DirectFiles direct_files_;   // opened by Submit (the executor's thread) only
  FileMappings mapped_files_;  // likewise: map reads, each file mapped once for the load
  StepEvents& steps_;
  PinnedMemory slots_;  // 2 x threads chunks; outlives the workers (declared before them)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Job>> jobs_;  // every job submitted (owns its events)
  std::deque<Job*> queue_;                  // jobs with chunks not yet taken
  uint64_t unfinished_ = 0;                 // jobs not yet fully enqueued/skipped
  bool stop_ = false, cancelled_ = false;
  Status error_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::atomic<uint64_t> bytes_enqueued_{0};
  // Guarded by mu_: the first fill queued, and the end of the latest drain after it.
  std::optional<std::chrono::steady_clock::time_point> origin_, drained_;
};

}  // namespace loadplan::backend::cuda
