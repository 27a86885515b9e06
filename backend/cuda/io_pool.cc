// The I/O thread pool: chunked pread (ReadExact) into pinned double buffers, cudaMemcpyAsync per
// thread.
#include "backend/cuda/io_pool.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "base/seconds.h"

namespace loadplan::backend::cuda {
namespace {

using Clock = std::chrono::steady_clock;
using base::SecondsSince;

}  // namespace

struct IoPool::Worker {
  Stream stream;
  uint8_t* slot[2] = {nullptr, nullptr};  // its two chunks of the pool's one pinned block
  Event start[2], end[2];                 // timing events around the slot's last copy
  bool busy[2] = {false, false};
  int next = 0;
  const Job* synced = nullptr;  // the job whose waits this stream already waits for
  bool started = false;         // took a chunk already (guarded by the pool's mu_)
  double read_s = 0, copy_s = 0, slot_wait_s = 0;
  double job_wait_s = 0;  // guarded by mu_: waits for a job after the first chunk (Next)
  // Guarded by mu_ (Next): when it took its first chunk, and when it last came back for one.
  Clock::time_point first_at, last_at;
  double enqueue_s = 0;  // in Copy, after the read: its fill's wait edges, the CUDA calls
  uint64_t bytes = 0, file_bytes = 0, chunks = 0, reads = 0;
  std::thread thread;
};

// The parts of one step (SubmitParts): the step is published when the last part is done.
struct IoPool::StepJoin {
  size_t left = 0;                  // parts not yet fully enqueued
  std::vector<cudaEvent_t> events;  // of the parts done so far
};

struct IoPool::Job {
  FillRequest req;
  std::shared_ptr<StepJoin> join;        // shared by the parts of its step
  const DirectFile* direct = nullptr;    // direct mode: the file's O_DIRECT descriptor
  const FileMapping* mapping = nullptr;  // a map read: the file's mapping
  uint64_t next = 0;                     // offset of the next chunk to hand out
  uint64_t chunk = 0;                    // bytes per chunk (whole runs for a strided job)
  uint64_t chunks = 0, finished = 0;
  std::vector<Event> per_worker;  // recorded after each chunk that worker copies
  std::vector<uint8_t> used;
};

IoPool::IoPool(uint64_t chunk_bytes, uint64_t read_bytes, int device, StepEvents& steps,
               bool direct)
    : chunk_bytes_(chunk_bytes),
      read_bytes_(read_bytes == 0 ? chunk_bytes : std::min(read_bytes, chunk_bytes)),
      device_(device),
      direct_(direct),
      steps_(steps) {}

Status IoPool::Create(uint32_t threads, uint64_t chunk_bytes, int device, StepEvents& steps,
                      std::unique_ptr<IoPool>& out, bool direct, uint64_t read_bytes) {
  if (threads == 0 || chunk_bytes == 0)
    return Status::Error("I/O threads and chunk bytes must be positive");
  if (direct && read_bytes != 0)
    return Status::Error("a read size within chunks applies to buffered reads, not direct ones",
                         base::ErrorKind::kInvalidInput);
  std::unique_ptr<IoPool> pool(new IoPool(chunk_bytes, read_bytes, device, steps, direct));
  const uint64_t slot_bytes = direct ? DirectBufferBytes(chunk_bytes) : chunk_bytes;
  // One pinned allocation for every slot: one page-locking call instead of 2 x threads.
  if (slot_bytes > UINT64_MAX / 2 / threads)
    return Status::Error("I/O threads x chunk bytes overflow the pinned block");
  if (Status st = AllocatePinned(uint64_t{2} * threads * slot_bytes, pool->slots_); !st.ok())
    return st;
  for (uint32_t i = 0; i < threads; ++i) {
    auto k = std::make_unique<Worker>();
    Status st = CreateStream(k->stream);
    for (int s = 0; s < 2 && st.ok(); ++s) {
      k->slot[s] = pool->slots_.get() + (uint64_t{2} * i + s) * slot_bytes;
      st = CreateEvent(k->start[s], true);
      if (st.ok()) st = CreateEvent(k->end[s], true);
    }
    if (!st.ok()) return st;
    pool->workers_.push_back(std::move(k));
  }
  for (uint32_t i = 0; i < threads; ++i) {
    pool->workers_[i]->thread = std::thread([p = pool.get(), i] { p->Run(i); });
  }
  out = std::move(pool);
  return Status::Ok();
}

IoPool::~IoPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    cancelled_ = true;
  }
  work_cv_.notify_all();
  for (auto& k : workers_) {
    if (k->thread.joinable()) k->thread.join();
  }
  for (auto& k : workers_) {
    if (k->stream) LOADPLAN_CUDA_WARN(cudaStreamSynchronize(k->stream.get()));
  }
}

Status IoPool::Submit(FillRequest request) {
  std::vector<FillRequest> one;
  one.push_back(std::move(request));
  return SubmitParts(std::move(one));
}

Status IoPool::Prepare(Job& j) {
  if (direct_ && j.req.bytes > 0) {
    base::Result<const DirectFile*> direct = direct_files_.Of(j.req.file);
    if (!direct.ok()) return direct.status();
    j.direct = *direct;
  }
  if (j.req.map && j.req.bytes > 0) {
    base::Result<const FileMapping*> mapping = mapped_files_.Of(j.req.file);
    if (!mapping.ok()) return mapping.status();
    j.mapping = *mapping;
  }
  j.chunk = chunk_bytes_;
  if (const FillRequest& r = j.req; r.run_bytes != 0) {
    if (r.run_bytes > chunk_bytes_ || r.bytes % r.run_bytes != 0 || r.stride < r.run_bytes ||
        (direct_ && !r.span)) {
      return Status::Error(
          fmt::format("fill {}: a strided read of {}-byte runs {} apart is not "
                      "one the pool takes ({} per chunk{})",
                      r.what, r.run_bytes, r.stride, chunk_bytes_, direct_ ? ", direct" : ""),
          base::ErrorKind::kInternal);
    }
    // Runs: as many whole runs as a slot holds; span: as many as their covering bytes fit.
    const uint64_t rows =
        r.span ? (chunk_bytes_ - r.run_bytes) / r.stride + 1 : chunk_bytes_ / r.run_bytes;
    j.chunk = rows * r.run_bytes;
  }
  j.chunks = j.req.bytes / j.chunk + (j.req.bytes % j.chunk != 0 ? 1 : 0);
  if (j.chunks == 0) return Status::Ok();
  // A worker makes its event of the job at its first chunk of it (Copy): a job read by one
  // thread costs one event, and the submitting thread creates none.
  j.per_worker.resize(workers_.size());
  j.used.assign(workers_.size(), 0);
  return Status::Ok();
}

Status IoPool::SubmitParts(std::vector<FillRequest> parts) {
  if (parts.empty()) return Status::Error("a fill of no parts", base::ErrorKind::kInternal);
  const simulator::StepIndex step = parts.front().step;
  auto join = std::make_shared<StepJoin>();
  join->left = parts.size();
  std::vector<std::unique_ptr<Job>> jobs;  // every part ready before any is queued
  for (FillRequest& r : parts) {
    auto job = std::make_unique<Job>();
    job->req = std::move(r);
    job->join = join;
    if (Status st = Prepare(*job); !st.ok()) return st;
    jobs.push_back(std::move(job));
  }
  std::optional<std::vector<cudaEvent_t>> publish;
  uint64_t chunks = 0;
  {
    std::lock_guard lock(mu_);
    if (!origin_) origin_ = Clock::now();
    for (std::unique_ptr<Job>& job : jobs) {
      if (job->chunks == 0) {
        publish = JobDone(*job, {});  // nothing to read: done at once
      } else {
        queue_.push_back(job.get());
        ++unfinished_;
        chunks += job->chunks;
      }
      jobs_.push_back(std::move(job));
    }
  }
  if (publish) steps_.Publish(step, std::move(*publish));
  Wake(chunks);
  return Status::Ok();
}

// A worker that is not waiting looks at the queue before it waits (Next), so waking one
// waiter per chunk loses no chunk; waking all for a one-chunk job would wake every thread
// to find nothing for all but one.
void IoPool::Wake(uint64_t chunks) {
  if (chunks >= workers_.size()) {
    work_cv_.notify_all();
    return;
  }
  for (uint64_t i = 0; i < chunks; ++i) work_cv_.notify_one();
}

std::optional<std::vector<cudaEvent_t>> IoPool::JobDone(Job& j, std::vector<cudaEvent_t> events) {
  StepJoin& join = *j.join;
  join.events.insert(join.events.end(), events.begin(), events.end());
  if (--join.left > 0) return std::nullopt;
  return std::move(join.events);
}

void IoPool::Run(uint32_t w) {
  const Status device = LOADPLAN_CUDA_CHECK(cudaSetDevice(device_));
  Chunk c;
  while (Next(w, c)) {
    Status st = device;
    if (st.ok() && !c.skip) st = Copy(w, c);
    Finish(w, c, std::move(st));
  }
}

bool IoPool::Next(uint32_t w, Chunk& c) {
  Worker& k = *workers_[w];
  std::unique_lock lock(mu_);
  const bool waits = k.started && queue_.empty() && !stop_;
  const auto t0 = Clock::now();
  k.last_at = t0;  // its last chunk (if any) is queued
  work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
  if (queue_.empty()) return false;
  if (waits) k.job_wait_s += SecondsSince(t0);
  if (!k.started) k.first_at = Clock::now();
  k.started = true;
  Job* j = queue_.front();
  c = Chunk{.job = j,
            .offset = j->next,
            .bytes = std::min(j->chunk, j->req.bytes - j->next),
            .skip = cancelled_ || !error_.ok()};
  j->next += c.bytes;
  if (j->next >= j->req.bytes) queue_.pop_front();
  return true;
}

Status IoPool::FreeSlot(Worker& k, int s) {
  if (!k.busy[s]) return Status::Ok();
  const auto t0 = Clock::now();
  LOADPLAN_CUDA_TRY(cudaEventSynchronize(k.end[s].get()));
  k.slot_wait_s += SecondsSince(t0);
  float ms = 0;
  LOADPLAN_CUDA_TRY(cudaEventElapsedTime(&ms, k.start[s].get(), k.end[s].get()));
  k.copy_s += ms / 1e3;
  k.busy[s] = false;
  return Status::Ok();
}

base::Result<uint64_t> IoPool::Read(Worker& k, const Chunk& c, uint8_t* slot) {
  const FillRequest& r = c.job->req;
  if (r.run_bytes != 0 && r.map && c.job->mapping != nullptr) {
    const uint64_t first = c.offset / r.run_bytes, rows = c.bytes / r.run_bytes;
    const ReadContext context{.tensor = r.tensor,
                              .tensor_offset = r.tensor_offset + first * r.stride,
                              .faults = r.faults};
    ++k.reads;
    k.file_bytes += c.bytes;
    if (Status st = c.job->mapping->Gather(r.file,
                                           {.offset = r.file_offset + first * r.stride,
                                            .run_bytes = r.run_bytes,
                                            .stride = r.stride,
                                            .count = rows},
                                           slot, context);
        !st.ok()) {
      return st;
    }
    return uint64_t{0};
  }
  if (r.run_bytes != 0 && !r.span) {
    if (Status st = ReadRuns(k, c, slot); !st.ok()) return st;
    return uint64_t{0};
  }
  // Contiguous bytes: the chunk's own, or for a span the runs' covering bytes.
  uint64_t file_at = r.file_offset + c.offset, tensor_at = r.tensor_offset + c.offset;
  uint64_t n = c.bytes;
  if (r.run_bytes != 0) {
    const uint64_t first = c.offset / r.run_bytes * r.stride;
    file_at = r.file_offset + first;
    tensor_at = r.tensor_offset + first;
    n = (c.bytes / r.run_bytes - 1) * r.stride + r.run_bytes;
  }
  const ReadContext context{.tensor = r.tensor, .tensor_offset = tensor_at, .faults = r.faults};
  k.file_bytes += n;
  if (c.job->direct != nullptr) {
    ++k.reads;
    return ReadDirect(r.file, *c.job->direct, file_at, n, {slot, DirectBufferBytes(chunk_bytes_)},
                      context);
  }
  for (uint64_t at = 0; at < n; at += read_bytes_) {
    const uint64_t piece = std::min(read_bytes_, n - at);
    ReadContext where = context;
    where.tensor_offset += at;
    ++k.reads;
    if (Status st = ReadExact(r.file, file_at + at, {slot + at, piece}, where); !st.ok()) return st;
  }
  return uint64_t{0};
}

// Runs mode: one pread per run, packed into the slot in order.
Status IoPool::ReadRuns(Worker& k, const Chunk& c, uint8_t* slot) {
  const FillRequest& r = c.job->req;
  const uint64_t first = c.offset / r.run_bytes, rows = c.bytes / r.run_bytes;
  for (uint64_t i = 0; i < rows; ++i) {
    const uint64_t at = (first + i) * r.stride;
    const ReadContext context{
        .tensor = r.tensor, .tensor_offset = r.tensor_offset + at, .faults = r.faults};
    if (Status st =
            ReadExact(r.file, r.file_offset + at, {slot + i * r.run_bytes, r.run_bytes}, context);
        !st.ok()) {
      return st;
    }
  }
  k.reads += rows;
  k.file_bytes += c.bytes;
  return Status::Ok();
}

Status IoPool::Copy(uint32_t w, const Chunk& c) {
  Worker& k = *workers_[w];
  const int s = k.next;
  k.next ^= 1;
  if (Status st = FreeSlot(k, s); !st.ok()) return st;
  const auto t0 = Clock::now();
  const FillRequest& r = c.job->req;
  const base::Result<uint64_t> skew = Read(k, c, k.slot[s]);
  if (!skew.ok()) return skew.status();
  const uint8_t* src = k.slot[s] + *skew;
  k.read_s += SecondsSince(t0);
  const base::ScopedSeconds enqueue(k.enqueue_s);
  cudaStream_t stream = k.stream.get();
  if (k.synced != c.job) {
    std::vector<cudaEvent_t> events;
    steps_.Collect(r.waits, events);
    for (cudaEvent_t e : events) LOADPLAN_CUDA_TRY(cudaStreamWaitEvent(stream, e, 0));
    k.synced = c.job;
  }
  LOADPLAN_CUDA_TRY(cudaEventRecord(k.start[s].get(), stream));
  if (r.run_bytes != 0 && r.span) {  // gather the runs out of their covering bytes
    LOADPLAN_CUDA_TRY(cudaMemcpy2DAsync(r.dst + c.offset, r.run_bytes, src, r.stride, r.run_bytes,
                                        c.bytes / r.run_bytes, cudaMemcpyHostToDevice, stream));
  } else {
    LOADPLAN_CUDA_TRY(
        cudaMemcpyAsync(r.dst + c.offset, src, c.bytes, cudaMemcpyHostToDevice, stream));
  }
  LOADPLAN_CUDA_TRY(cudaEventRecord(k.end[s].get(), stream));
  k.busy[s] = true;
  Event& done = c.job->per_worker[w];
  if (!done) {
    if (Status st = CreateEvent(done, false); !st.ok()) return st;
  }
  LOADPLAN_CUDA_TRY(cudaEventRecord(done.get(), stream));
  c.job->used[w] = 1;
  k.bytes += c.bytes;
  ++k.chunks;
  return Status::Ok();
}

void IoPool::Finish(uint32_t /*w*/, const Chunk& c, Status st) {
  const bool copied = st.ok() && !c.skip;
  if (!st.ok()) {
    SetError(st.WithMessage(fmt::format("fill {}: {}", c.job->req.what, st.message())));
  }
  if (copied) bytes_enqueued_ += c.bytes;
  std::optional<std::vector<cudaEvent_t>> publish;
  {
    std::lock_guard lock(mu_);
    if (++c.job->finished < c.job->chunks) return;
    std::vector<cudaEvent_t> events;
    for (size_t i = 0; i < c.job->used.size(); ++i) {
      if (c.job->used[i]) events.push_back(c.job->per_worker[i].get());
    }
    --unfinished_;
    publish = JobDone(*c.job, std::move(events));
  }
  if (publish) steps_.Publish(c.job->req.step, std::move(*publish));
  done_cv_.notify_all();
}

void IoPool::SetError(Status st) {
  std::lock_guard lock(mu_);
  if (error_.ok()) error_ = std::move(st);
}

Status IoPool::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void IoPool::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
}

Status IoPool::Drain(const std::function<void()>& tick) {
  {
    std::unique_lock lock(mu_);
    while (!done_cv_.wait_for(lock, std::chrono::milliseconds(100),
                              [&] { return unfinished_ == 0; })) {
      if (tick) {
        lock.unlock();
        tick();
        lock.lock();
      }
    }
  }
  // Every worker is idle now (no job left): their slots may be inspected from here.
  Status first = error();
  for (auto& k : workers_) {
    Status st = LOADPLAN_CUDA_CHECK(cudaStreamSynchronize(k->stream.get()));
    for (int s = 0; s < 2 && st.ok(); ++s) st = FreeSlot(*k, s);
    if (st.ok()) continue;
    // A slot that cannot be freed after a fill failed is reported with it, never dropped.
    first = first.ok() ? st : first.WithMessage(first.message() + "; " + st.message());
  }
  std::lock_guard lock(mu_);
  // The latest drain: a load drains at FreeArena too, and fills the weights no derive call
  // reads after it.
  if (origin_) drained_ = Clock::now();
  return first;
}

IoStats IoPool::Stats() const {
  std::lock_guard lock(mu_);
  IoStats s;
  for (const auto& k : workers_) {
    s.bytes += k->bytes;
    s.file_bytes += k->file_bytes;
    s.chunks += k->chunks;
    s.reads += k->reads;
    s.read_s += k->read_s;
    s.copy_s += k->copy_s;
    s.slot_wait_s += k->slot_wait_s;
    s.job_wait_s += k->job_wait_s;
    s.enqueue_s += k->enqueue_s;
    if (!origin_ || !drained_) continue;
    // A thread that took no chunk idled from the first fill to the end.
    const Clock::time_point first = k->started ? k->first_at : *drained_;
    // A thread may come back for a chunk just after the drain saw its last copy queued.
    const Clock::time_point last = k->started ? std::min(k->last_at, *drained_) : *drained_;
    s.start_s += std::chrono::duration<double>(first - *origin_).count();
    s.end_s += std::chrono::duration<double>(*drained_ - last).count();
  }
  return s;
}

}  // namespace loadplan::backend::cuda
