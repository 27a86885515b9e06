// The page cache's cost per small read (run_read_probe.h).
#include "backend/measure/run_read_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "backend/measure/passes.h"
#include "base/seconds.h"

namespace loadplan::backend {
namespace {

constexpr uint64_t kStride = 16 << 10;
constexpr uint64_t kSmall = 1 << 10, kLarge = 4 << 10;

// One thread's preads: runs [first, first + runs) of `size` bytes, kStride apart.
base::Status Preads(int fd, uint64_t first, uint64_t runs, uint64_t size) {
  std::vector<uint8_t> buffer(size);
  for (uint64_t k = first; k < first + runs; ++k) {
    const ssize_t n = ::pread(fd, buffer.data(), size, static_cast<off_t>(k * kStride));
    if (n != static_cast<ssize_t>(size)) {
      return base::Status::Error(
          fmt::format("run read probe: pread of {} bytes at {} gave {}{}", size, k * kStride, n,
                      n < 0 ? fmt::format(" ({})", std::strerror(errno)) : ""),
          base::ErrorKind::kIo);
    }
  }
  return base::Status::Ok();
}

// Seconds of one pass: `threads` threads at once, `runs` preads of `size` bytes each.
base::Result<double> Pass(int fd, uint64_t runs, uint64_t size, uint32_t threads) {
  const auto t0 = std::chrono::steady_clock::now();
  if (base::Status st =
          OnThreads(threads, [&](uint32_t t) { return Preads(fd, t * runs, runs, size); });
      !st.ok()) {
    return st;
  }
  return base::SecondsSince(t0);
}

// The median of 3 passes after a warm-up.
base::Result<double> MedianPass(int fd, uint64_t runs, uint64_t size, uint32_t threads) {
  return MedianOfThree([&] { return Pass(fd, runs, size, threads); });
}

}  // namespace

base::Result<RunReadCost> ProbeRunReads(int fd, uint64_t file_bytes, uint64_t runs,
                                        uint32_t threads) {
  threads = std::max<uint32_t>(threads, 1);
  runs = std::min(runs, file_bytes / kStride) / threads;  // each thread's
  if (runs < 16) {
    return base::Status::Error(
        fmt::format("run read probe: a file of {} bytes holds fewer than 16 runs {} bytes apart "
                    "for each of {} threads",
                    file_bytes, kStride, threads));
  }
  const base::Result<double> small = MedianPass(fd, runs, kSmall, threads);
  if (!small.ok()) return small.status();
  const base::Result<double> large = MedianPass(fd, runs, kLarge, threads);
  if (!large.ok()) return large.status();
  const double n = static_cast<double>(runs);
  const double per_byte = std::max(0.0, (*large - *small) / (n * (kLarge - kSmall)));
  const double per_run = *small / n - per_byte * kSmall;
  // Noise can push the fit's intercept to 0 or below: then the whole small read's time, an
  // upper bound, rather than a figure that makes runs look free.
  return RunReadCost{.per_run_s = per_run > 0 ? per_run : *small / n,
                     .per_byte_s = per_byte,
                     .runs = runs * threads,
                     .threads = threads};
}

}  // namespace loadplan::backend
