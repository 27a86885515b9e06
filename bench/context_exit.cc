// What a CUDA process pays to start and to end, apart from any load: the context's start, one
// device allocation of a load's size and its free, and then the process's exit either through
// main's return (the runtime's exit handlers destroy the primary context) or through
// std::_Exit after an explicit cudaDeviceReset, or std::_Exit alone (the kernel driver tears
// the context down when the process's descriptors close). The wall time around the process,
// measured by its caller (scripts/gpu/gpu-check PARTS=paths), less what it prints, is the exec and
// the exit.
//
//   bench_context_exit MODE GIB      MODE: return | reset-exit | exit
//
// Prints one JSON line: the mode, the seconds of each step and the system clock just before
// the exit starts (`end_unix_s`), then exits by MODE.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/seconds.h"
#include "base/unix_time.h"

namespace {

using Clock = std::chrono::steady_clock;

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "bench_context_exit: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const double start_unix_s = loadplan::base::UnixSeconds();
  if (argc != 3 || (std::strcmp(argv[1], "return") != 0 &&
                    std::strcmp(argv[1], "reset-exit") != 0 && std::strcmp(argv[1], "exit") != 0)) {
    std::fprintf(stderr, "usage: bench_context_exit return|reset-exit|exit GIB\n");
    return 2;
  }
  const std::string mode = argv[1];
  const double gib = std::atof(argv[2]);
  if (!(gib >= 0 && gib <= 1024)) {
    std::fprintf(stderr, "bench_context_exit: GIB must be in [0, 1024], not %s\n", argv[2]);
    return 2;
  }
  auto t = Clock::now();
  if (!Ok(cudaFree(nullptr), "context")) return 3;
  const double context_s = loadplan::base::SecondsSince(t);
  t = Clock::now();
  void* p = nullptr;
  const size_t bytes = static_cast<size_t>(gib * 1073741824.0);
  if (bytes > 0 && !Ok(cudaMalloc(&p, bytes), "cudaMalloc")) return 3;
  const double malloc_s = loadplan::base::SecondsSince(t);
  t = Clock::now();
  if (p != nullptr && !Ok(cudaFree(p), "cudaFree")) return 3;
  const double free_s = loadplan::base::SecondsSince(t);
  double reset_s = 0;
  if (mode == "reset-exit") {
    t = Clock::now();
    if (!Ok(cudaDeviceReset(), "cudaDeviceReset")) return 3;
    reset_s = loadplan::base::SecondsSince(t);
  }
  std::printf(
      "{\"mode\": \"%s\", \"gib\": %g, \"start_unix_s\": %.6f, \"context_s\": %.6f, "
      "\"malloc_s\": %.6f, \"free_s\": %.6f, \"reset_s\": %.6f, \"end_unix_s\": %.6f}\n",
      mode.c_str(), gib, start_unix_s, context_s, malloc_s, free_s, reset_s,
      loadplan::base::UnixSeconds());
  std::fflush(stdout);
  if (mode == "return") return 0;
  std::_Exit(0);
}
