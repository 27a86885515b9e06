// The host memory copy probe.
#include "backend/measure/host_copy_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/seconds.h"

namespace loadplan::backend {
namespace {

// One timed pass: every thread copies its slice; the wall time from the first start to the last
// end.
double CopyOnce(uint8_t* dst, const uint8_t* src, uint64_t bytes, uint32_t threads) {
  const uint64_t part = (bytes + threads - 1) / threads;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::jthread> pool;
  for (uint32_t k = 0; k < threads; ++k) {
    const uint64_t b = std::min(bytes, k * part), e = std::min(bytes, b + part);
    if (e > b) pool.emplace_back([=] { std::memcpy(dst + b, src + b, e - b); });
  }
  pool.clear();  // joins
  return base::SecondsSince(t0);
}

}  // namespace

base::Result<Throughput> ProbeHostCopy(uint64_t bytes, uint32_t threads, int repeats) {
  if (bytes == 0 || threads == 0) {
    return base::Status::Error(
        fmt::format("host copy probe: {} bytes on {} threads: both must be positive", bytes,
                    threads),
        base::ErrorKind::kInvalidInput);
  }
  std::unique_ptr<uint8_t[]> src(new (std::nothrow) uint8_t[bytes]);
  std::unique_ptr<uint8_t[]> dst(new (std::nothrow) uint8_t[bytes]);
  if (!src || !dst) {
    return base::Status::Error(fmt::format("host copy probe: cannot allocate 2 x {} bytes", bytes),
                               base::ErrorKind::kOutOfMemory)
        .WithBytes(2 * bytes, std::nullopt);
  }
  std::memset(src.get(), 0x5A, bytes);
  std::memset(dst.get(), 0, bytes);
  Throughput r{.bytes = bytes};
  for (int i = 0; i <= std::max(repeats, 1); ++i) {  // i == 0: warm-up
    const double s = CopyOnce(dst.get(), src.get(), bytes, threads);
    if (i > 0 && (r.seconds == 0 || s < r.seconds)) r.seconds = s;
  }
  if (std::memcmp(dst.get(), src.get(), bytes) != 0) {
    return base::Status::Error("host copy probe: the copy differs from its source",
                               base::ErrorKind::kInternal);
  }
  return r;
}

}  // namespace loadplan::backend
