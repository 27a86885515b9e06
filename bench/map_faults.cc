// How a mapped gather should bring its pages in (issue 30, the `map` slice read): a strided
// slice's runs copied out of a fresh read-only mapping of a page-cached file, 4 MiB of runs a
// gather, spread over THREADS threads, side by side four ways:
//   populate  each gather's span populated first in one madvise(MADV_POPULATE_READ), then each
//             run copied with memcpy (FileMapping::Gather until 2026-12-06);
//   fault     each run copied with memcpy, its pages faulting in as it is touched (each fault
//             maps the cached pages around it too): FileMapping::Gather since;
//   prefetch  fault, and the next run's first KiB prefetched before each copy;
//   stream    fault, each run copied with non-temporal stores (the slot is read by the DMA,
//             not by this CPU).
//   bench_map_faults [THREADS=2] [GIB=2] [ROUNDS=3] [DIR=/tmp]
// Patterns: Llama-3.1-8B's o_proj and down_proj columns at TP=8 (1 KiB of 8 KiB, 3.5 KiB of
// 28 KiB) and o_proj at TP=2 (4 KiB of 8 KiB). Prints GB/s of run bytes, each round's best.
#include <fcntl.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/seconds.h"
#include "bench/hot_file.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace {

enum class Way { kPopulate, kFault, kPrefetch, kStream };
constexpr std::array<const char*, 4> kWayNames = {"populate", "fault", "prefetch", "stream"};

struct Pattern {
  const char* name;
  uint64_t run, stride;
};
constexpr std::array<Pattern, 3> kPatterns = {
    {{"o_proj TP=8", 1024, 8192}, {"down_proj TP=8", 3584, 28672}, {"o_proj TP=2", 4096, 8192}}};
constexpr uint64_t kChunk = 4 << 20;

// Non-temporal copy of `n` bytes (a multiple of 64) to a 64-byte aligned `to`.
__attribute__((target("avx2"))) void CopyStreaming(uint8_t* to, const char* from, uint64_t n) {
  for (uint64_t i = 0; i < n; i += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(to + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(to + i + 32), b);
  }
  _mm_sfence();
}

// One gather: `runs` runs of p.run bytes from `span`, p.stride apart, into `out`.
// false when populating was refused (a kernel before 5.14: the column would measure faults).
bool Gather(Way way, const Pattern& p, const char* span, uint64_t runs, uint8_t* out) {
  if (way == Way::kPopulate &&
      ::madvise(const_cast<char*>(span), (runs - 1) * p.stride + p.run, MADV_POPULATE_READ) != 0)
    return false;
  for (uint64_t i = 0; i < runs; ++i) {
    const char* from = span + i * p.stride;
    if (way == Way::kPrefetch && i + 1 < runs)
      for (uint64_t k = 0; k < p.run && k < 1024; k += 64) __builtin_prefetch(from + p.stride + k);
    if (way == Way::kStream)
      CopyStreaming(out + i * p.run, from, p.run);
    else
      std::memcpy(out + i * p.run, from, p.run);
  }
  return true;
}

// Seconds to gather every whole 4 MiB of runs the file holds, over `threads` threads, from a
// mapping made for the pass (its pages not yet in the page tables); -1, said on stderr, when
// the mapping, a buffer or populating failed.
double Pass(int fd, uint64_t bytes, Way way, const Pattern& p, uint32_t threads) {
  const uint64_t runs = kChunk / p.run, span = runs * p.stride, gathers = bytes / span;
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    fmt::print(stderr, "bench_map_faults: mapping {} bytes failed\n", bytes);
    return -1;
  }
  std::atomic<bool> failed{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto* out = static_cast<uint8_t*>(std::aligned_alloc(4096, kChunk));
      for (uint64_t g = t; out != nullptr && g < gathers; g += threads)
        if (!Gather(way, p, static_cast<const char*>(map) + g * span, runs, out)) failed = true;
      if (out == nullptr) failed = true;
      std::free(out);
    });
  }
  for (std::thread& t : pool) t.join();
  const double s = loadplan::base::SecondsSince(start);
  ::munmap(map, bytes);
  if (failed) {
    fmt::print(stderr, "bench_map_faults: {}: a buffer or MADV_POPULATE_READ was refused\n",
               kWayNames[static_cast<size_t>(way)]);
    return -1;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t threads = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 2;
  const uint64_t gib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::string dir = argc > 4 ? argv[4] : "/tmp";
  const std::string path = loadplan::bench::HotFile(dir, "bench-map-faults", gib << 30);
  if (path.empty() || threads == 0) {
    fmt::print(stderr, "bench_map_faults: no scratch file in {} (or THREADS 0)\n", dir);
    return 1;
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    ::unlink(path.c_str());
    return 1;
  }
  fmt::print("{} threads, {} GiB in the page cache, best of {} rounds, GB/s of run bytes\n",
             threads, gib, rounds);
  fmt::print("| pattern | populate | fault | prefetch | stream | fault / populate |\n");
  fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Pattern& p : kPatterns) {
    std::array<double, 4> best{};
    const uint64_t bytes = (gib << 30) / (kChunk / p.run * p.stride) * kChunk;
    for (int r = 0; r < rounds; ++r) {
      for (size_t w = 0; w < kWayNames.size(); ++w) {
        const double s = Pass(fd, gib << 30, static_cast<Way>(w), p, threads);
        if (s > 0) best[w] = std::max(best[w], static_cast<double>(bytes) / s / 1e9);
      }
    }
    fmt::print("| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", p.name, best[0], best[1],
               best[2], best[3], best[0] > 0 ? best[1] / best[0] : 0.0);
  }
  ::close(fd);
  ::unlink(path.c_str());
  return 0;
}
