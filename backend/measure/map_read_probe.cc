// The page cache's cost per mapped page (map_read_probe.h).
#include "backend/measure/map_read_probe.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "backend/checkpoint/mapped_read.h"
#include "backend/measure/passes.h"

namespace loadplan::backend {
namespace {

constexpr uint64_t kRunBytes = 256, kStride = 16 << 10, kRunsAGather = 256;
constexpr uint64_t kGatherSpan = kRunsAGather * kStride;  // 4 MiB
constexpr uint64_t kPage = 4096;

// One thread's gathers: every `threads`-th from `first`; the first failure, or OK.
base::Status Gathers(const FileMapping& mapping, const FileRef& file, uint64_t gathers,
                     uint64_t first, uint32_t threads) {
  std::vector<uint8_t> out(kRunBytes * kRunsAGather);
  for (uint64_t g = first; g < gathers; g += threads) {
    const MappedRuns runs{.offset = g * kGatherSpan,
                          .run_bytes = kRunBytes,
                          .stride = kStride,
                          .count = kRunsAGather};
    if (base::Status st = mapping.Gather(file, runs, out.data(), {}); !st.ok()) return st;
  }
  return base::Status::Ok();
}

// Seconds of one pass: map, gather on every thread, unmap.
base::Result<double> Pass(const FileRef& file, uint64_t gathers, uint32_t threads) {
  const auto t0 = std::chrono::steady_clock::now();
  base::Result<std::unique_ptr<FileMapping>> mapping = FileMapping::Map(file);
  if (!mapping.ok()) return mapping.status();
  base::Status st =
      OnThreads(threads, [&](uint32_t t) { return Gathers(**mapping, file, gathers, t, threads); });
  mapping->reset();
  if (!st.ok()) return st;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

base::Result<MapReadCost> ProbeMappedPages(const FileRef& file, uint32_t threads,
                                           uint64_t max_bytes) {
  const uint64_t gathers = std::min(file.size_at_open, max_bytes) / kGatherSpan;
  if (gathers == 0) {
    return base::Status::Error(
        fmt::format("map read probe: {} ({} bytes) is smaller than one gather of {} bytes",
                    file.path, file.size_at_open, kGatherSpan));
  }
  threads = static_cast<uint32_t>(std::clamp<uint64_t>(threads, 1, gathers));
  const base::Result<double> median = MedianOfThree([&] { return Pass(file, gathers, threads); });
  if (!median.ok()) return median.status();
  // A gather populates from its first run's page to its last run's.
  const uint64_t pages = gathers * (((kRunsAGather - 1) * kStride + kRunBytes + kPage - 1) / kPage);
  return MapReadCost{.per_page_s = *median * threads / static_cast<double>(pages),
                     .pages = pages,
                     .threads = threads};
}

}  // namespace loadplan::backend
