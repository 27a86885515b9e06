// The cost of a mapped gather per page and per run (map_read_probe.h).
#include "backend/measure/map_read_probe.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "backend/checkpoint/mapped_read.h"
#include "backend/measure/passes.h"
#include "base/seconds.h"
#include "base/slice_runs.h"
#include "simulator/timing/slice_read.h"

namespace loadplan::backend {
namespace {

constexpr uint64_t kGatherSpan = uint64_t{4} << 20;  // each gather's span, both patterns

// A probe pattern: runs of `run_bytes`, `stride` apart, filling one gather's span.
struct Pattern {
  uint64_t run_bytes, stride;
  uint64_t runs() const { return kGatherSpan / stride; }
  // A gather's pages, counted as the model counts a slice's (SpanPages).
  uint64_t pages() const {
    return simulator::timing::SpanPages(
        {.run_bytes = run_bytes, .count = runs(), .stride = stride});
  }
};
// Pages dominate the first (256 runs over 1,021 pages), runs the second (65,536 over 1,024).
constexpr Pattern kSparse{.run_bytes = 256, .stride = 16 << 10};
constexpr Pattern kDense{.run_bytes = 16, .stride = 64};

// One thread's gathers: every `threads`-th from `first`; the first failure, or OK.
base::Status Gathers(const FileMapping& mapping, const FileRef& file, const Pattern& p,
                     uint64_t gathers, uint64_t first, uint32_t threads) {
  std::vector<uint8_t> out(p.run_bytes * p.runs());
  for (uint64_t g = first; g < gathers; g += threads) {
    const MappedRuns runs{
        .offset = g * kGatherSpan, .run_bytes = p.run_bytes, .stride = p.stride, .count = p.runs()};
    if (base::Status st = mapping.Gather(file, runs, out.data(), {}); !st.ok()) return st;
  }
  return base::Status::Ok();
}

// Seconds of one pass: map, gather on every thread, unmap.
base::Result<double> Pass(const FileRef& file, const Pattern& p, uint64_t gathers,
                          uint32_t threads) {
  const auto t0 = std::chrono::steady_clock::now();
  base::Result<std::unique_ptr<FileMapping>> mapping = FileMapping::Map(file);
  if (!mapping.ok()) return mapping.status();
  base::Status st = OnThreads(
      threads, [&](uint32_t t) { return Gathers(**mapping, file, p, gathers, t, threads); });
  mapping->reset();
  if (!st.ok()) return st;
  return base::SecondsSince(t0);
}

}  // namespace

MapReadCost SolveMapCosts(double sparse_s, double dense_s) {
  const auto pa = static_cast<double>(kSparse.pages()), ra = static_cast<double>(kSparse.runs());
  const auto pb = static_cast<double>(kDense.pages()), rb = static_cast<double>(kDense.runs());
  const double per_run = (dense_s * pa - sparse_s * pb) / (rb * pa - ra * pb);
  const double per_page = (sparse_s - ra * per_run) / pa;
  if (per_run <= 0) return {.per_page_s = sparse_s / pa, .per_run_s = 0};
  if (per_page <= 0) {
    const double half = sparse_s / pa / 2;
    return {.per_page_s = half, .per_run_s = std::max((dense_s - pb * half) / rb, 0.0)};
  }
  return {.per_page_s = per_page, .per_run_s = per_run};
}

base::Result<MapReadCost> ProbeMappedPages(const FileRef& file, uint32_t threads,
                                           uint64_t max_bytes) {
  const uint64_t gathers = std::min(file.size_at_open, max_bytes) / kGatherSpan;
  if (gathers == 0) {
    return base::Status::Error(
        fmt::format("map read probe: {} ({} bytes) is smaller than one gather of {} bytes",
                    file.path, file.size_at_open, kGatherSpan));
  }
  threads = static_cast<uint32_t>(std::clamp<uint64_t>(threads, 1, gathers));
  // Seconds a gather on each thread while all gather: a pass x threads / gathers.
  std::array<double, 2> each{};
  for (const auto& [k, p] : {std::pair{0, kSparse}, std::pair{1, kDense}}) {
    const base::Result<double> median =
        MedianOfThree([&] { return Pass(file, p, gathers, threads); });
    if (!median.ok()) return median.status();
    each[k] = *median * threads / static_cast<double>(gathers);
  }
  MapReadCost c = SolveMapCosts(each[0], each[1]);
  c.pages = gathers * (kSparse.pages() + kDense.pages());
  c.runs = gathers * (kSparse.runs() + kDense.runs());
  c.threads = threads;
  return c;
}

}  // namespace loadplan::backend
