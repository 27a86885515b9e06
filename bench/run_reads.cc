// The fixed cost of one small pread from the page cache, the figure a strided slice's runs pay
// (ProbeRunReads, what `calibrate` writes as rates.per_run_s), on this machine without a GPU.
//   bench_run_reads [GIB=1] [ROUNDS=3] [DIR=/tmp]
// Writes a scratch file of GIB GiB in DIR, reads it once (into the page cache), then times the
// probe ROUNDS times; prints a row per round and removes the file.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/measure/run_read_probe.h"
#include "bench/hot_file.h"

int main(int argc, char** argv) {
  const uint64_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string dir = argc > 3 ? argv[3] : "/tmp";
  const uint64_t bytes = (gib == 0 ? 1 : gib) << 30;
  const std::string path = loadplan::bench::HotFile(dir, "loadplan-bench-run-reads", bytes);
  if (path.empty()) {
    fmt::print(stderr, "bench_run_reads: cannot write {} GiB in {}\n", bytes >> 30, dir);
    return 1;
  }
  fmt::print(
      "| round | runs a size | us per pread (fixed) | ns per KiB |\n|---:|---:|---:|---:|\n");
  int rc = 0;
  for (int r = 0; r < rounds; ++r) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    const auto c = loadplan::backend::ProbeRunReads(fd, bytes);
    ::close(fd);
    if (!c.ok()) {
      fmt::print(stderr, "bench_run_reads: {}\n", c.status().message());
      rc = 1;
      break;
    }
    fmt::print("| {} | {} | {:.3f} | {:.1f} |\n", r + 1, c->runs, c->per_run_s * 1e6,
               c->per_byte_s * 1e9 * 1024);
  }
  ::unlink(path.c_str());
  return rc;
}
