// Pinned host-to-device copies in a staged load's pattern, without its reads: GiB of copies cut
// into chunks of C MiB, each from one of `slots` pinned slots (the I/O pool's 2 per thread) on
// one of S streams in turn, at most `slots` copies in flight (copy i waits on the host for copy
// i - slots, as an I/O thread waits for its slot). The one-copy ceiling (`run --ceilings`: 1 GiB
// copies on 4 streams) measured beside it. Whether the copy pattern alone (chunk size, streams,
// depth) costs a staged load part of the link is what it answers (docs/performance.md).
//
//   bench_h2d_chunks [GIB [SLOTS [quick|realloc]]]   (default 8 GiB, 24 slots; quick: 4, 16 and
//        64 MiB chunks on 12, 4 and 4 streams only; realloc: 4 MiB chunks on 12 streams into a
//        fresh allocation, then right after freeing it and allocating GIB anew, into that same
//        memory again, 1 s later and 5 s later: what a second load of the size in one process
//        meets)
//
// Prints one JSON line per configuration: chunk MiB, streams, slots, GB/s (best of 3).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "base/seconds.h"

namespace {

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "bench_h2d_chunks: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

struct Rig {
  uint8_t* pinned = nullptr;
  uint8_t* device = nullptr;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> done;  // one per slot: its last copy's end
  ~Rig() {
    for (cudaEvent_t e : done) cudaEventDestroy(e);
    for (cudaStream_t s : streams) cudaStreamDestroy(s);
    if (device != nullptr) cudaFree(device);
    if (pinned != nullptr) cudaFreeHost(pinned);
  }
};

// Seconds for `total` bytes in `chunk`-byte copies, or a negative value on a CUDA error.
double Pass(Rig& rig, uint64_t total, uint64_t chunk, uint32_t streams, uint32_t slots) {
  const uint64_t n = total / chunk;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t s = static_cast<uint32_t>(i % slots);
    cudaStream_t st = rig.streams[i % streams];
    if (i >= slots && !Ok(cudaEventSynchronize(rig.done[s]), "slot wait")) return -1;
    if (!Ok(cudaMemcpyAsync(rig.device + i * chunk, rig.pinned + s * chunk, chunk,
                            cudaMemcpyHostToDevice, st),
            "copy") ||
        !Ok(cudaEventRecord(rig.done[s], st), "record"))
      return -1;
  }
  if (!Ok(cudaDeviceSynchronize(), "sync")) return -1;
  return loadplan::base::SecondsSince(t0);
}

// The realloc mode: one pass into the first allocation, then free and allocate again, and
// passes at once, into that memory again, 1 s later and 5 s later.
int Realloc(Rig& rig, uint64_t total, uint32_t slots) {
  const uint64_t chunk = uint64_t{4} << 20;
  const auto pass = [&](const char* when) {
    const double s = Pass(rig, total, chunk, 12, slots);
    if (s < 0) return false;
    std::printf(
        "{\"realloc\": \"%s\", \"chunk_mib\": 4, \"streams\": 12, \"gib\": %.0f, \"gbps\": %.2f}\n",
        when, static_cast<double>(total) / 1073741824.0, static_cast<double>(total) / s / 1e9);
    std::fflush(stdout);
    return true;
  };
  if (!pass("first allocation")) return 3;
  if (!Ok(cudaFree(rig.device), "cudaFree")) return 3;
  rig.device = nullptr;
  if (!Ok(cudaMalloc(&rig.device, total), "cudaMalloc again")) return 3;
  if (!pass("right after free and allocate")) return 3;
  if (!pass("the same allocation again")) return 3;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  if (!pass("1 s later")) return 3;
  std::this_thread::sleep_for(std::chrono::seconds(4));
  return pass("5 s later") ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 8;
  const long slots_arg = argc > 2 ? std::atol(argv[2]) : 24;
  const std::string_view mode = argc > 3 ? argv[3] : "";
  if (!(gib >= 1 && gib <= 64) || slots_arg < 1 || slots_arg > 256 || argc > 4 ||
      (!mode.empty() && mode != "quick" && mode != "realloc")) {
    std::fprintf(stderr,
                 "usage: bench_h2d_chunks [GIB in 1..64 [SLOTS in 1..256 [quick|realloc]]]\n");
    return 2;
  }
  const auto slots = static_cast<uint32_t>(slots_arg);
  const uint64_t total = static_cast<uint64_t>(gib * 1073741824.0) & ~((uint64_t{64} << 20) - 1);
  const uint64_t mib = 1 << 20;
  struct Config {
    uint64_t chunk;
    uint32_t streams, slots;
  };
  std::vector<Config> configs;
  const bool quick = mode == "quick";
  for (uint64_t c : {1, 2, 4, 8, 16}) {
    for (uint32_t s : {1u, 2u, 4u, 12u}) {
      if (!quick || (c == 4 && s == 12) || (c == 16 && s == 4))
        configs.push_back({c * mib, s, slots});
    }
  }
  configs.push_back({64 * mib, 4, std::min<uint32_t>(slots, 4)});  // about run --ceilings' copies
  if (!quick) configs.push_back({4 * mib, 12, 2 * slots});         // twice the depth
  uint64_t pinned = 0;
  uint32_t most_slots = 0;
  for (const Config& c : configs) {
    pinned = std::max(pinned, c.chunk * c.slots);
    most_slots = std::max(most_slots, c.slots);
  }
  Rig rig;
  if (!Ok(cudaMallocHost(&rig.pinned, pinned), "cudaMallocHost") ||
      !Ok(cudaMalloc(&rig.device, total), "cudaMalloc"))
    return 3;
  rig.streams.resize(12);
  for (cudaStream_t& s : rig.streams)
    if (!Ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream")) return 3;
  rig.done.resize(most_slots);
  for (cudaEvent_t& e : rig.done)
    if (!Ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "event")) return 3;
  if (mode == "realloc") return Realloc(rig, total, slots);
  if (Pass(rig, total, 4 * mib, 4, slots) < 0) return 3;  // warm-up
  for (const Config& c : configs) {
    double best = 0;
    for (int r = 0; r < 3; ++r) {
      const double s = Pass(rig, total, c.chunk, c.streams, c.slots);
      if (s < 0) return 3;
      if (best == 0 || s < best) best = s;
    }
    std::printf(
        "{\"chunk_mib\": %llu, \"streams\": %u, \"slots\": %u, \"gib\": %.0f, \"gbps\": %.2f}\n",
        static_cast<unsigned long long>(c.chunk / mib), c.streams, c.slots,
        static_cast<double>(total) / 1073741824.0, static_cast<double>(total) / best / 1e9);
    std::fflush(stdout);
  }
  return 0;
}
