// The three ways the CUDA backend reads a strided slice's runs out of the page cache, on the host
// alone (no GPU): a ReadExact per run (--slice-read runs), the covering span read and the runs
// gathered with memcpy (span; on the GPU the copy engine gathers instead), and
// FileMapping::Gather out of one mapping of the file (map). Each path copies the same runs into
// one buffer, split over THREADS threads in 4 MiB chunks of runs.
//   bench_slice_reads [THREADS=2] [GIB=1] [ROUNDS=3] [DIR=/tmp]
// Patterns: a Llama-3.1-8B o_proj column at TP=8 (1 KiB runs 8 KiB apart), a down_proj column
// at TP=8 (3.5 KiB of 28 KiB), gpt-oss's MXFP4 down blocks and scales at TP=8 (192 B of
// 1,440 B, 12 B of 90 B), and the two Llama columns at TP=2 (4 KiB of 8 KiB, 14 KiB of 28 KiB).
// Then the slice-read model checked against the same rounds: `calibrate`'s two probes
// (ProbeRunReads, ProbeMappedPages) and the bulk read rate measured here with THREADS threads,
// the path ChooseSliceRead takes with them for each pattern (what `--slice-read auto` and the
// plan take), its best rate ÷ the fastest of the three, and ÷ the rate the model gives it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/checkpoint/file_read.h"
#include "backend/checkpoint/mapped_read.h"
#include "backend/measure/map_read_probe.h"
#include "backend/measure/passes.h"
#include "backend/measure/run_read_probe.h"
#include "base/seconds.h"
#include "bench/hot_file.h"
#include "simulator/timing/slice_read.h"

namespace {

using loadplan::backend::FileRef;
using loadplan::backend::MappedRuns;
using loadplan::base::Status;
using loadplan::simulator::timing::SliceRead;

constexpr uint64_t kChunk = uint64_t{4} << 20;

// One chunk of runs [first, first + rows) read one way into out.
using ReadChunk = std::function<bool(const FileRef&, uint64_t run, uint64_t stride, uint64_t first,
                                     uint64_t rows, uint8_t* out, std::vector<uint8_t>& scratch)>;

bool Runs(const FileRef& f, uint64_t run, uint64_t stride, uint64_t first, uint64_t rows,
          uint8_t* out, std::vector<uint8_t>&) {
  for (uint64_t i = 0; i < rows; ++i) {
    if (!loadplan::backend::ReadExact(f, (first + i) * stride, {out + i * run, run}, {}).ok())
      return false;
  }
  return true;
}

bool Span(const FileRef& f, uint64_t run, uint64_t stride, uint64_t first, uint64_t rows,
          uint8_t* out, std::vector<uint8_t>& scratch) {
  const uint64_t span = (rows - 1) * stride + run;
  scratch.resize(span);
  if (!loadplan::backend::ReadExact(f, first * stride, scratch, {}).ok()) return false;
  for (uint64_t i = 0; i < rows; ++i) std::copy_n(scratch.data() + i * stride, run, out + i * run);
  return true;
}

// The file mapped once (what the CUDA backend's map reads do), each chunk gathered from it.
const loadplan::backend::FileMapping* g_mapping = nullptr;

bool Map(const FileRef& f, uint64_t run, uint64_t stride, uint64_t first, uint64_t rows,
         uint8_t* out, std::vector<uint8_t>&) {
  const MappedRuns r{.offset = first * stride, .run_bytes = run, .stride = stride, .count = rows};
  return g_mapping->Gather(f, r, out, {}).ok();
}

// The backend's three paths, in SliceRead's order after kAuto.
constexpr struct {
  const char* name;
  SliceRead read;
  bool (*chunk)(const FileRef&, uint64_t, uint64_t, uint64_t, uint64_t, uint8_t*,
                std::vector<uint8_t>&);
} kPaths[] = {{"runs", SliceRead::kRuns, Runs},
              {"span", SliceRead::kSpan, Span},
              {"map", SliceRead::kMap, Map}};

// Seconds for every run of the file read by `read` over `threads` threads, chunks dealt in turn.
double Time(const FileRef& f, uint64_t bytes, uint64_t run, uint64_t stride, uint32_t threads,
            const ReadChunk& read, std::vector<uint8_t>& out, bool& ok) {
  const uint64_t count = bytes / stride, rows = kChunk / run;
  const auto t0 = std::chrono::steady_clock::now();
  ok = loadplan::backend::OnThreads(threads, [&](uint32_t t) {
         std::vector<uint8_t> scratch;
         for (uint64_t c = t * rows; c < count; c += rows * threads) {
           const uint64_t n = std::min(rows, count - c);
           if (!read(f, run, stride, c, n, out.data() + c * run, scratch)) {
             return Status::Error("a read failed");
           }
         }
         return Status::Ok();
       }).ok();
  return loadplan::base::SecondsSince(t0);
}

// The figures auto weighs, measured on this file with `threads` threads: the probes' per-run and
// per-page costs, and the bulk read rate (4 MiB reads, the span path on contiguous bytes).
bool MeasureCosts(const FileRef& f, uint64_t bytes, uint32_t threads,
                  loadplan::simulator::timing::SliceReadCosts& costs) {
  const auto runs = loadplan::backend::ProbeRunReads(f.fd, bytes, 65536, threads);
  const auto pages = loadplan::backend::ProbeMappedPages(f, threads);
  if (!runs.ok() || !pages.ok()) {
    fmt::print(stderr, "bench_slice_reads: {}\n",
               runs.ok() ? pages.status().message() : runs.status().message());
    return false;
  }
  std::vector<uint8_t> out(bytes);
  bool ok = true;
  const double s = Time(f, bytes, kChunk, kChunk, threads, Span, out, ok);
  costs = {.per_run_s = runs->per_run_s,
           .read_rate = static_cast<double>(bytes) / s,
           .per_page_s = pages->per_page_s,
           .per_map_run_s = pages->per_run_s,
           .threads = threads};
  fmt::print(
      "\nmeasured with {} threads: {:.2f} us a run, {:.3f} us a page and {:.4f} us a mapped run, "
      "bulk reads {:.2f} GB/s\n",
      threads, costs.per_run_s * 1e6, costs.per_page_s * 1e6, costs.per_map_run_s * 1e6,
      costs.read_rate / 1e9);
  return ok;
}

struct Pattern {
  const char* name;
  uint64_t run, stride;
};

// One round of a pattern: GB/s of slice bytes by each path, a fresh mapping of the file for the
// map (as each load has: no page table left from a round before); false when a read failed.
bool Round(const FileRef& file, uint64_t bytes, const Pattern& p, uint32_t threads,
           std::vector<uint8_t>& out, std::array<double, 3>& gbps) {
  bool all = true;
  for (size_t k = 0; k < gbps.size(); ++k) {
    auto mapping = loadplan::backend::FileMapping::Map(file);
    if (!mapping.ok()) return false;
    g_mapping = mapping->get();
    bool ok = true;
    const double s = Time(file, bytes, p.run, p.stride, threads, kPaths[k].chunk, out, ok);
    all = all && ok;
    gbps[k] = static_cast<double>(out.size()) / s / 1e9;
  }
  return all;
}

// Auto's path for each pattern with the measured costs, its best rate and the fastest path's,
// and the rate the model gives that path: the slice's bytes at the bulk rate plus what the path
// adds (SliceReadSeconds), as the plan predicts a load's slices.
void PrintChoices(const std::vector<Pattern>& patterns,
                  const std::vector<std::array<double, 3>>& best, uint64_t bytes,
                  const loadplan::simulator::timing::SliceReadCosts& costs) {
  fmt::print(
      "| pattern | auto takes | its best GB/s | the fastest path's | auto / fastest | model GB/s "
      "| measured / model |\n");
  fmt::print("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < patterns.size(); ++i) {
    const Pattern& p = patterns[i];
    const loadplan::base::SliceRuns runs{
        .run_bytes = p.run, .count = bytes / p.stride, .stride = p.stride};
    const SliceRead how = loadplan::simulator::timing::ChooseSliceRead(runs, costs);
    double mine = 0;
    for (size_t k = 0; k < best[i].size(); ++k) {
      if (kPaths[k].read == how) mine = best[i][k];
    }
    const double fastest = *std::max_element(best[i].begin(), best[i].end());
    const auto filled = static_cast<double>(runs.bytes());
    const double model = filled /
                         (filled / costs.read_rate +
                          loadplan::simulator::timing::SliceReadSeconds(how, runs, costs)) /
                         1e9;
    fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.3f} | {:.2f} | {:.3f} |\n", p.name,
               loadplan::simulator::timing::SliceReadName(how), mine, fastest, mine / fastest,
               model, mine / model);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t threads = static_cast<uint32_t>(std::max(argc > 1 ? std::atoi(argv[1]) : 2, 1));
  const uint64_t gib = std::max<uint64_t>(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1, 1);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::string dir = argc > 4 ? argv[4] : "/tmp";
  const uint64_t bytes = gib << 30;
  const std::string path = loadplan::bench::HotFile(dir, "loadplan-bench-slice-reads", bytes);
  if (path.empty()) {
    fmt::print(stderr, "bench_slice_reads: cannot write {} GiB in {}\n", gib, dir);
    return 1;
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  const FileRef file{path, fd, bytes};
  const std::vector<Pattern> patterns = {{"o_proj TP=8", 1024, 8192},
                                         {"down_proj TP=8", 3584, 28672},
                                         {"gpt-oss down blocks TP=8", 192, 1440},
                                         {"gpt-oss down scales TP=8", 12, 90},
                                         {"o_proj TP=2", 4096, 8192},
                                         {"down_proj TP=2", 14336, 28672}};
  fmt::print("{} threads, {} GiB in the page cache\n", threads, gib);
  fmt::print(
      "| pattern | round | runs GB/s | span GB/s | map GB/s | map / best of runs and span |\n");
  fmt::print("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  int rc = 0;
  std::vector<std::array<double, 3>> best;  // each pattern's best GB/s by path
  for (const Pattern& p : patterns) {
    std::vector<uint8_t> out(bytes / p.stride * p.run);
    best.push_back({});
    for (int r = 0; r < rounds; ++r) {
      std::array<double, 3> gbps{};
      if (!Round(file, bytes, p, threads, out, gbps)) rc = 1;
      fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", p.name, r + 1, gbps[0],
                 gbps[1], gbps[2], gbps[2] / std::max(gbps[0], gbps[1]));
      for (size_t k = 0; k < gbps.size(); ++k) best.back()[k] = std::max(best.back()[k], gbps[k]);
    }
  }
  loadplan::simulator::timing::SliceReadCosts costs;
  if (!MeasureCosts(file, bytes, threads, costs)) rc = 1;
  PrintChoices(patterns, best, bytes, costs);
  ::close(fd);
  ::unlink(path.c_str());
  if (rc != 0) fmt::print(stderr, "bench_slice_reads: a read failed\n");
  return rc;
}
