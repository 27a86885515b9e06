// The host side of `loadplan calibrate`: context, copies, the scratch file's reads and the I/O
// pool's pipeline rates (hot and evicted). Kernel rates are in calibrate_kernels.cc.
#include "backend/measure/calibrate.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backend/measure/calibrate_internal.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_backend_impl.h"
#include "backend/cuda/io_pool.h"
#include "backend/measure/probe.h"
#include "backend/measure/map_read_probe.h"
#include "backend/measure/run_read_probe.h"
#include "base/seconds.h"

namespace loadplan::backend {
namespace {

using Clock = std::chrono::steady_clock;
using simulator::timing::MachineProfile;

Status IoError(const std::string& what) {
  return Status::Error(fmt::format("{}: {}", what, std::strerror(errno)), base::ErrorKind::kIo);
}

// The scratch file: written once, removed by the destructor.
class Scratch {
 public:
  ~Scratch() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  Status Write(const std::string& dir, uint64_t bytes) {
    path_ = dir + "/loadplan-calibrate-XXXXXX";
    std::vector<char> name(path_.begin(), path_.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
      Status st = IoError(fmt::format("cannot create a scratch file in {}", dir));
      path_.clear();
      return st;
    }
    path_ = name.data();
    fd_ = FileDescriptor(fd);
    std::vector<uint8_t> block(uint64_t{8} << 20);
    for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<uint8_t>(i * 131 + 7);
    for (uint64_t off = 0; off < bytes;) {
      const uint64_t n = std::min<uint64_t>(block.size(), bytes - off);
      const ssize_t w = ::pwrite(fd, block.data(), n, static_cast<off_t>(off));
      if (w <= 0) return IoError(fmt::format("writing {} at {}", path_, off));
      off += static_cast<uint64_t>(w);
    }
    if (::fsync(fd) != 0) return IoError(fmt::format("fsync {}", path_));
    bytes_ = bytes;
    return Status::Ok();
  }
  // Drops the file's pages from the page cache (clean pages: no root needed).
  Status Evict() const {
    if (::fdatasync(fd_.get()) != 0) return IoError(fmt::format("fdatasync {}", path_));
    const int e = ::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_DONTNEED);
    if (e != 0) {
      errno = e;
      return IoError(fmt::format("posix_fadvise(DONTNEED) {}", path_));
    }
    return Status::Ok();
  }
  // The fraction of [0, bytes) in the page cache (mincore), -1 when it cannot be told.
  double Resident(uint64_t bytes) const {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd_.get(), 0);
    if (p == MAP_FAILED) return -1;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((bytes + page - 1) / page);
    double r = -1;
    if (::mincore(p, bytes, v.data()) == 0) {
      uint64_t in = 0;
      for (unsigned char c : v) in += c & 1;
      r = static_cast<double>(in) / static_cast<double>(v.size());
    }
    ::munmap(p, bytes);
    return r;
  }
  [[nodiscard]] int fd() const { return fd_.get(); }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  FileDescriptor fd_;
  uint64_t bytes_ = 0;
};

// [begin, end) of the file read by `threads` threads in chunks into pinned buffers: seconds.
base::Result<double> TimedRead(const Scratch& f, uint64_t begin, uint64_t end, uint32_t threads,
                               uint64_t chunk) {
  std::vector<cuda::PinnedMemory> buffers(threads);
  for (cuda::PinnedMemory& b : buffers) {
    if (Status st = cuda::AllocatePinned(chunk, b); !st.ok()) return st;
  }
  std::atomic<uint64_t> next{begin};
  std::atomic<bool> short_read{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (uint32_t k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      for (uint64_t o = next.fetch_add(chunk); o < end; o = next.fetch_add(chunk)) {
        const uint64_t n = std::min(chunk, end - o);
        if (::pread(f.fd(), buffers[k].get(), n, static_cast<off_t>(o)) != static_cast<ssize_t>(n))
          short_read = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double s = base::SecondsSince(t0);
  if (short_read)
    return Status::Error(fmt::format("short read of {}", f.path()), base::ErrorKind::kIo);
  return s;
}

// [begin, end) of the file through a fresh I/O pool into device memory, as fills of `fill`
// bytes: seconds from the first submit to the drain (what `run` times).
base::Result<double> TimedPipeline(const Scratch& f, uint64_t begin, uint64_t end, uint64_t fill,
                                   const CalibrateOptions& o, cuda::DeviceMemory& dst) {
  const uint64_t fills = (end - begin + fill - 1) / fill;
  cuda::StepEvents steps(fills);
  std::unique_ptr<cuda::IoPool> pool;
  if (Status st = cuda::IoPool::Create(o.io_threads, o.chunk_bytes, o.device, steps, pool);
      !st.ok())
    return st;
  const auto t0 = Clock::now();
  for (uint64_t i = 0; i < fills; ++i) {
    const uint64_t off = begin + i * fill, n = std::min(fill, end - off);
    Status st = pool->Submit({.step = simulator::StepIndex{static_cast<uint32_t>(i)},
                              .file = {f.path(), f.fd(), f.bytes()},
                              .tensor = "(calibration bytes)",
                              .file_offset = off,
                              .dst = dst.get() + (off - begin),
                              .bytes = n,
                              .what = fmt::format("calibration fill {}", i)});
    if (!st.ok()) {
      pool->Cancel();
      (void)pool->Drain();
      return st;
    }
  }
  if (Status st = pool->Drain(); !st.ok()) return st;
  return base::SecondsSince(t0);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string NowUtc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

namespace {

// The context: its start time and the device memory it takes, the device's name.
Status CalibrateContext(const CalibrateOptions& o, MachineProfile& p, const Note& note) {
  const auto t_ctx = Clock::now();
  if (Status usable = DeviceUsable(o.device); !usable.ok()) return usable;
  LOADPLAN_CUDA_TRY(cudaSetDevice(o.device));
  LOADPLAN_CUDA_TRY(cudaFree(nullptr));
  p.context_start_s = base::SecondsSince(t_ctx);
  cuda::MemInfo mem;
  if (Status st = cuda::GetMemInfo(mem); !st.ok()) return st;
  p.context_device_bytes = mem.total - mem.free;
  cudaDeviceProp prop{};
  LOADPLAN_CUDA_TRY(cudaGetDeviceProperties(&prop, o.device));
  p.device = prop.name;
  p.measured = NowUtc();
  note(fmt::format("{}: context {:.3f} s, {:.1f} MiB used after it (of {:.1f} GiB)", p.device,
                   p.context_start_s, p.context_device_bytes / 1048576.0,
                   mem.total / 1073741824.0));
  return Status::Ok();
}

// The I/O pool's setup (streams, pinned slots, threads), one large allocation (median of 3),
// and the pinned host-to-device rate.
Status CalibrateSetupAndCopies(const CalibrateOptions& o, MachineProfile& p, const Note& note) {
  {
    cuda::StepEvents steps(1);
    std::unique_ptr<cuda::IoPool> pool;
    const auto t0 = Clock::now();
    if (Status st = cuda::IoPool::Create(p.io_threads, p.chunk_bytes, o.device, steps, pool);
        !st.ok())
      return st;
    p.setup_s = base::SecondsSince(t0);
  }
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    cuda::DeviceMemory m;
    const auto t0 = Clock::now();
    if (Status st = cuda::AllocateDevice(uint64_t{1} << 30, m); !st.ok()) return st;
    t.push_back(base::SecondsSince(t0));
    if (Status st = m.Free(); !st.ok()) return st;
  }
  p.alloc_s = Median(t);
  base::Result<Throughput> h2d = ProbePinnedH2D(uint64_t{1} << 30, 4, o.device, 3);
  if (!h2d.ok()) return h2d.status();
  p.pinned_h2d = h2d->bytes / h2d->seconds;
  note(fmt::format("pinned H2D {:.2f} GB/s; I/O pool setup {:.3f} s; 1 GiB cudaMalloc {:.4f} s",
                   p.pinned_h2d / 1e9, p.setup_s, p.alloc_s));
  return Status::Ok();
}

}  // namespace

base::Result<MachineProfile> Calibrate(const CalibrateOptions& o) {
  const Note note = [&o](const std::string& s) {
    if (o.note) o.note(s);
  };
  PrepareCudaProcess();
  MachineProfile p{.source = "loadplan calibrate",
                   .io_threads = std::max<uint32_t>(o.io_threads, 1),
                   .chunk_bytes = std::max<uint64_t>(o.chunk_bytes, 4096)};
  if (Status st = CalibrateContext(o, p, note); !st.ok()) return st;
  if (Status st = CalibrateSetupAndCopies(o, p, note); !st.ok()) return st;
  if (Status st = CalibrateKernels(o.device, p, note); !st.ok()) return st;
  if (Status st = CalibrateFiles(o, p, note); !st.ok()) return st;
  return p;
}

// Median seconds of 3 hot pipelines over the scratch file with `io`'s threads and chunk.
base::Result<double> HotPipeline(const Scratch& f, uint64_t bytes, uint64_t fill,
                                 const CalibrateOptions& io, cuda::DeviceMemory& dst) {
  std::vector<double> t;
  for (int r = 0; r < 4; ++r) {
    base::Result<double> s = TimedPipeline(f, 0, bytes, fill, io, dst);
    if (!s.ok()) return s.status();
    if (r > 0) t.push_back(*s);  // the first warms the pinned slots' pages
  }
  return Median(t);
}

// --choose-io: the fastest (threads, chunk) of a grid beside the given pair, into `p`.
Status ChooseIo(const Scratch& f, uint64_t bytes, uint64_t fill, const CalibrateOptions& o,
                MachineProfile& p, cuda::DeviceMemory& dst, const Note& note) {
  std::vector<std::pair<uint32_t, uint64_t>> grid = {{p.io_threads, p.chunk_bytes}};
  for (const uint32_t t : {8u, 12u, 16u, 24u}) {
    for (const uint64_t mib : {2u, 4u, 8u}) {
      if (t != p.io_threads || mib << 20 != p.chunk_bytes) grid.emplace_back(t, mib << 20);
    }
  }
  double given_s = 0, best_s = 0;
  std::pair<uint32_t, uint64_t> best = grid.front();
  std::string rows;
  for (const auto& [threads, chunk] : grid) {
    CalibrateOptions io = o;
    io.io_threads = threads;
    io.chunk_bytes = chunk;
    base::Result<double> s = HotPipeline(f, bytes / chunk * chunk, fill, io, dst);
    if (!s.ok()) return s.status();
    rows += fmt::format("{}{} x {} MiB {:.2f}", rows.empty() ? "" : ", ", threads, chunk >> 20,
                        bytes / chunk * chunk / *s / 1e9);
    if (given_s == 0) given_s = best_s = *s;
    if (*s < best_s) best_s = *s, best = {threads, chunk};
  }
  if (best_s * 1.02 > given_s) best = grid.front(), best_s = given_s;  // within the noise
  p.io_threads = best.first;
  p.chunk_bytes = best.second;
  note(fmt::format("I/O pairs, hot pipeline GB/s (median of 3): {}", rows));
  note(fmt::format("I/O chosen: {} threads x {} MiB ({:.3f}x the given {} x {} MiB)", p.io_threads,
                   p.chunk_bytes >> 20, given_s / best_s, grid.front().first,
                   grid.front().second >> 20));
  return Status::Ok();
}

namespace {

// Hot (the file is in the page cache after the write; read once more to be sure): the read
// rate, the pipeline rate without its ramp, the per-fill cost of many small fills.
Status CalibrateHot(const Scratch& f, uint64_t bytes, uint64_t fill, const CalibrateOptions& o,
                    MachineProfile& p, cuda::DeviceMemory& dst, const Note& note) {
  std::vector<double> reads, pipes;
  for (int r = 0; r < 4; ++r) {
    base::Result<double> t = TimedRead(f, 0, bytes, p.io_threads, p.chunk_bytes);
    if (!t.ok()) return t.status();
    if (r > 0) reads.push_back(*t);
  }
  p.page_cache_read = bytes / Median(reads);
  for (int r = 0; r < 6; ++r) {
    base::Result<double> t = TimedPipeline(f, 0, bytes, fill, o, dst);
    if (!t.ok()) return t.status();
    if (r > 0) pipes.push_back(*t);
  }
  const double hot_s = Median(pipes);
  // Per fill: 2048 fills of 16 KiB, whose bytes take well under a microsecond each.
  const uint64_t small = 2048, small_fill = 16384;
  base::Result<double> ts = TimedPipeline(f, 0, small * small_fill, small_fill, o, dst);
  if (!ts.ok()) return ts.status();
  p.per_fill_s = *ts / small;
  // The model adds the ramp (one chunk per thread read before the first copy) back: take it
  // out. 64 MiB fills take far longer than per_fill_s, which they hide.
  const double ramp = p.chunk_bytes * static_cast<double>(p.io_threads) / p.page_cache_read;
  p.pipeline_hot = bytes / std::max(hot_s - ramp, hot_s / 2);
  note(
      fmt::format("page cache read {:.2f} GB/s; pipeline {:.2f} GB/s measured (median {:.4f} s "
                  "of 5), {:.2f} GB/s without the ramp; {:.1f} us per small fill",
                  p.page_cache_read / 1e9, bytes / hot_s / 1e9, hot_s, p.pipeline_hot / 1e9,
                  p.per_fill_s * 1e6));
  return Status::Ok();
}

// A strided slice's runs (the file still hot): the fixed cost of one small pread with the
// profile's I/O threads reading at once.
Status CalibrateRuns(const Scratch& f, uint64_t bytes, MachineProfile& p, const Note& note) {
  const int fd = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("cannot open {} again", f.path()));
  const base::Result<RunReadCost> c = ProbeRunReads(fd, bytes, 65536, p.io_threads);
  ::close(fd);
  if (!c.ok()) return c.status();
  p.per_run_s = c->per_run_s;
  note(
      fmt::format("slice runs: {:.2f} us per pread of a run on each of {} threads ({} runs of 1 "
                  "and 4 KiB)",
                  c->per_run_s * 1e6, c->threads, c->runs));
  return Status::Ok();
}

// A strided slice's span through a mapping (the file still hot): one page's cost and one run's
// with the profile's I/O threads gathering at once.
Status CalibrateMap(const Scratch& f, uint64_t bytes, MachineProfile& p, const Note& note) {
  const base::Result<MapReadCost> c =
      ProbeMappedPages({.path = f.path(), .fd = f.fd(), .size_at_open = bytes}, p.io_threads);
  if (!c.ok()) return c.status();
  p.per_page_s = c->per_page_s;
  p.per_map_run_s = c->per_run_s;
  note(
      fmt::format("slice map: {:.3f} us per page of a span and {:.4f} us per run copied, on "
                  "each of {} threads ({} pages, {} runs)",
                  c->per_page_s * 1e6, c->per_run_s * 1e6, c->threads, c->pages, c->runs));
  return Status::Ok();
}

// Cold: evict, check that it worked, read the first cold_bytes; again for the pipeline.
Status CalibrateCold(Scratch& f, uint64_t bytes, uint64_t fill, const CalibrateOptions& o,
                     MachineProfile& p, cuda::DeviceMemory& dst, const Note& note) {
  const uint64_t cold = std::min(bytes, std::max(o.cold_bytes, p.chunk_bytes));
  if (Status st = f.Evict(); !st.ok()) return st;
  const double left = f.Resident(cold);
  base::Result<double> tc = TimedRead(f, 0, cold, p.io_threads, p.chunk_bytes);
  if (!tc.ok()) return tc.status();
  p.direct_read = cold / *tc;
  if (Status st = f.Evict(); !st.ok()) return st;
  base::Result<double> tp = TimedPipeline(f, 0, cold, fill, o, dst);
  if (!tp.ok()) return tp.status();
  const double cold_ramp = p.chunk_bytes * static_cast<double>(p.io_threads) / p.direct_read;
  p.pipeline_cold = cold / std::max(*tp - cold_ramp, *tp / 2);
  note(fmt::format(
      "evicted ({:.1f}% still cached): read {:.2f} GB/s; pipeline {:.2f} GB/s "
      "measured ({:.3f} s for {:.2f} GB), {:.2f} GB/s without the ramp",
      left * 100, p.direct_read / 1e9, cold / *tp / 1e9, *tp, cold / 1e9, p.pipeline_cold / 1e9));
  return Status::Ok();
}

}  // namespace

Status CalibrateFiles(const CalibrateOptions& given, MachineProfile& p, const Note& note) {
  Scratch f;
  const uint64_t bytes =
      std::max<uint64_t>(given.scratch_bytes, uint64_t{64} << 20) / p.chunk_bytes * p.chunk_bytes;
  const auto tw = Clock::now();
  if (Status st = f.Write(given.dir, bytes); !st.ok()) return st;
  note(fmt::format("scratch {} ({:.2f} GB) written and synced in {:.2f} s", f.path(), bytes / 1e9,
                   base::SecondsSince(tw)));
  cuda::DeviceMemory dst;
  if (Status st = cuda::AllocateDevice(bytes, dst); !st.ok()) return st;
  const uint64_t fill = uint64_t{64} << 20;  // a checkpoint tensor's order of size
  if (given.choose_io) {
    if (Status st = ChooseIo(f, bytes, fill, given, p, dst, note); !st.ok()) return st;
  }
  CalibrateOptions o = given;  // every rate below holds for the profile's pair
  o.io_threads = p.io_threads;
  o.chunk_bytes = p.chunk_bytes;
  if (Status st = CalibrateHot(f, bytes, fill, o, p, dst, note); !st.ok()) return st;
  if (Status st = CalibrateRuns(f, bytes, p, note); !st.ok()) return st;
  if (Status st = CalibrateMap(f, bytes, p, note); !st.ok()) return st;
  if (Status st = CalibrateCold(f, bytes, fill, o, p, dst, note); !st.ok()) return st;
  return dst.Free();
}

}  // namespace loadplan::backend
