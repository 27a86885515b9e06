// The pinned H2D and host-read probes.
#include "backend/measure/probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/cuda_check.h"

namespace loadplan::backend {
namespace {

Status TimeCopies(const std::vector<cuda::Stream>& streams, uint8_t* dst, const uint8_t* src,
                  uint64_t bytes, double& seconds) {
  cuda::Event start, end;
  if (Status st = cuda::CreateEvent(start, true); !st.ok()) return st;
  if (Status st = cuda::CreateEvent(end, true); !st.ok()) return st;
  cudaStream_t first = streams[0].get();
  LOADPLAN_CUDA_TRY(cudaEventRecord(start.get(), first));
  const uint64_t part = (bytes / streams.size() + 4095) / 4096 * 4096;
  std::vector<cuda::Event> done(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    const uint64_t b = std::min(bytes, i * part), e = std::min(bytes, b + part);
    LOADPLAN_CUDA_TRY(cudaStreamWaitEvent(streams[i].get(), start.get(), 0));
    if (e > b)
      LOADPLAN_CUDA_TRY(
          cudaMemcpyAsync(dst + b, src + b, e - b, cudaMemcpyHostToDevice, streams[i].get()));
    if (Status st = cuda::CreateEvent(done[i], false); !st.ok()) return st;
    LOADPLAN_CUDA_TRY(cudaEventRecord(done[i].get(), streams[i].get()));
    LOADPLAN_CUDA_TRY(cudaStreamWaitEvent(first, done[i].get(), 0));
  }
  LOADPLAN_CUDA_TRY(cudaEventRecord(end.get(), first));
  LOADPLAN_CUDA_TRY(cudaEventSynchronize(end.get()));
  float ms = 0;
  LOADPLAN_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), end.get()));
  seconds = ms / 1e3;
  return Status::Ok();
}

// What a copy probe times: `bytes` of pinned host memory (filled), as many device bytes, and
// `n` streams on `device`.
struct CopyRig {
  cuda::PinnedMemory host;
  cuda::DeviceMemory dev;
  std::vector<cuda::Stream> streams;

  Status Make(uint64_t bytes, uint32_t n, int device) {
    LOADPLAN_CUDA_TRY(cudaSetDevice(device));
    if (Status st = cuda::AllocatePinned(bytes, host); !st.ok()) return st;
    if (Status st = cuda::AllocateDevice(bytes, dev); !st.ok()) return st;
    std::memset(host.get(), 0x5A, bytes);
    streams.resize(std::max<uint32_t>(n, 1));
    for (cuda::Stream& s : streams) {
      if (Status st = cuda::CreateStream(s); !st.ok()) return st;
    }
    return Status::Ok();
  }
  Status Free() {
    Status st = dev.Free();
    return st.ok() ? host.Free() : st;
  }
};

Status PinnedH2D(uint64_t bytes, uint32_t n, int device, int repeats, double& best) {
  CopyRig rig;
  if (Status st = rig.Make(bytes, n, device); !st.ok()) return st;
  best = 0;
  for (int r = 0; r <= repeats; ++r) {  // r == 0: warm-up
    double s = 0;
    if (Status st = TimeCopies(rig.streams, rig.dev.get(), rig.host.get(), bytes, s); !st.ok())
      return st;
    if (r > 0 && (best == 0 || s < best)) best = s;
  }
  return rig.Free();
}

// One round of copies of ProbeH2DBesideHostRead, on the host clock around its event timing.
struct Round {
  std::chrono::steady_clock::time_point start, end;
  double seconds = 0;  // the events' time
};

// Rounds of `bytes` copies until a stop is requested; `started` after the first (a warm-up,
// not recorded) or on any error, so the reads never wait for a copier that failed.
Status CopyUntil(uint64_t bytes, uint32_t n, int device, std::atomic<bool>& started,
                 std::stop_token stop, std::vector<Round>& rounds) {
  struct Started {  // set on every way out
    std::atomic<bool>& flag;
    ~Started() { flag = true; }
  } guard{started};
  CopyRig rig;
  if (Status st = rig.Make(bytes, n, device); !st.ok()) return st;
  for (bool warm = true; !stop.stop_requested(); warm = false) {
    Round r{.start = std::chrono::steady_clock::now()};
    if (Status st = TimeCopies(rig.streams, rig.dev.get(), rig.host.get(), bytes, r.seconds);
        !st.ok())
      return st;
    r.end = std::chrono::steady_clock::now();
    if (warm)
      started = true;  // the reads start after the warm-up round
    else
      rounds.push_back(r);
  }
  return rig.Free();
}

}  // namespace

base::Result<SharedCeilings> ProbeH2DBesideHostRead(const Checkpoint& checkpoint, uint32_t threads,
                                                    uint64_t chunk_bytes, uint32_t streams,
                                                    int device, const TensorSet* tensors) {
  constexpr uint64_t kRound = uint64_t{256} << 20;
  std::atomic<bool> started{false};
  Status copies;
  std::vector<Round> rounds;
  ReadWindow window;
  base::Result<Throughput> read = Status::Ok();
  {
    // A jthread: if the reads throw, its destructor asks the copier to stop and joins it.
    std::jthread copier([&](std::stop_token stop) {
      copies = CopyUntil(kRound, streams, device, started, stop, rounds);
    });
    while (!started.load()) std::this_thread::yield();
    read = ProbeHostRead(checkpoint, threads, chunk_bytes, tensors, &window);
  }  // joined
  if (!copies.ok()) return copies;
  if (!read.ok()) return read.status();
  SharedCeilings r{.read = *read};
  for (const Round& x : rounds) {  // only the rounds that ran wholly inside the reads
    if (x.start >= window.start && x.end <= window.end)
      r.h2d.bytes += kRound, r.h2d.seconds += x.seconds;
  }
  if (r.h2d.bytes < 3 * kRound) r.h2d = {};  // too few rounds inside the reads to say
  return r;
}

base::Result<Throughput> ProbePinnedH2D(uint64_t bytes, uint32_t streams, int device, int repeats) {
  Throughput r{.bytes = bytes};
  if (Status st = PinnedH2D(bytes, streams, device, repeats, r.seconds); !st.ok()) return st;
  return r;
}

namespace {

struct ReadTask {
  int fd;
  uint64_t offset, bytes;
};

// The chunks of every tensor in `tensors` (null: all), on descriptors of the checkpoint's files
// opened here; `bytes` their total.
base::Status ReadTasksOf(const Checkpoint& checkpoint, uint64_t chunk_bytes,
                         const TensorSet* tensors, std::vector<FileDescriptor>& fds,
                         std::vector<ReadTask>& tasks, uint64_t& bytes) {
  for (const SafetensorsFile& f : checkpoint.files()) {
    fds.emplace_back(::open(f.path().c_str(), O_RDONLY | O_CLOEXEC));
    if (fds.back().get() < 0) {
      return Status::Error(fmt::format("cannot open {}: {}", f.path(), std::strerror(errno)),
                           base::ErrorKind::kIo);
    }
    for (const TensorInfo& t : f.tensors()) {
      if (tensors != nullptr && !tensors->contains(t.name)) continue;
      for (uint64_t o = 0; o < t.bytes(); o += chunk_bytes) {
        tasks.push_back(
            {fds.back().get(), f.FileOffset(t) + o, std::min(chunk_bytes, t.bytes() - o)});
      }
      bytes += t.bytes();
    }
  }
  return Status::Ok();
}

}  // namespace

base::Result<Throughput> ProbeHostRead(const Checkpoint& checkpoint, uint32_t threads,
                                       uint64_t chunk_bytes, const TensorSet* tensors,
                                       ReadWindow* window) {
  std::vector<FileDescriptor> fds;
  std::vector<ReadTask> tasks;
  Throughput r;
  if (Status st = ReadTasksOf(checkpoint, chunk_bytes, tensors, fds, tasks, r.bytes); !st.ok())
    return st;
  threads = std::max<uint32_t>(threads, 1);
  std::vector<cuda::PinnedMemory> buffers(threads);
  for (cuda::PinnedMemory& b : buffers) {
    if (Status st = cuda::AllocatePinned(chunk_bytes, b); !st.ok()) return st;
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string error;  // the first short read
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (uint32_t k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      for (size_t i = next++; i < tasks.size(); i = next++) {
        if (::pread(tasks[i].fd, buffers[k].get(), tasks[i].bytes,
                    static_cast<off_t>(tasks[i].offset)) != static_cast<ssize_t>(tasks[i].bytes)) {
          std::lock_guard lock(mu);
          if (error.empty()) error = fmt::format("short pread at {}", tasks[i].offset);
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  if (window != nullptr) *window = {.start = t0, .end = t1};
  if (!error.empty()) return Status::Error(error, base::ErrorKind::kIo);
  return r;
}

}  // namespace loadplan::backend
