// Ceilings measured in the same run as a load: the pinned host-to-device copy rate and the
// host read rate (page cache -> pinned memory with pread, the I/O threads' own first half),
// each alone and both at once (the way a load meets them).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "backend/checkpoint/checkpoint.h"
#include "backend/throughput.h"
#include "base/status.h"

namespace loadplan::backend {

// `bytes` from one pinned buffer to one device buffer, split over `streams` streams, timed
// with events around all of them; the best of `repeats` after one warm-up. The CUDA error
// (kDevice, kOutOfMemory) when an allocation or copy fails.
base::Result<Throughput> ProbePinnedH2D(uint64_t bytes, uint32_t streams, int device,
                                        int repeats = 3);

// Tensor names a probe reads (a plan's fills: a deployment stage reads only its own).
using TensorSet = std::set<std::string, std::less<>>;

// When the reads ran, on the host's steady clock.
struct ReadWindow {
  std::chrono::steady_clock::time_point start, end;
};

// Every tensor of the checkpoint (or of `tensors` only) read once with pread in `chunk_bytes`
// chunks by `threads` threads into pinned buffers (no device copy): the read ceiling of the I/O
// pool when the files are in the page cache; `window` gets the reads' start and end. kIo when
// a file cannot be opened or a read comes up short.
base::Result<Throughput> ProbeHostRead(const Checkpoint& checkpoint, uint32_t threads,
                                       uint64_t chunk_bytes, const TensorSet* tensors = nullptr,
                                       ReadWindow* window = nullptr);

// Both halves of the load at once: pinned host -> device copies of 256 MiB rounds over
// `streams` streams, back to back, while ProbeHostRead(checkpoint, threads, chunk_bytes,
// tensors) runs beside them. `h2d` sums the rounds that started and ended inside the reads'
// window (event-timed; bytes 0 when fewer than 3 did: reads too short to say), `read` is the
// reads' own rate: what the copy engine drains while the CPU copies out of the page cache, and
// the reverse. Errors as the two probes'.
struct SharedCeilings {
  Throughput h2d;  // seconds: the sum of the counted rounds' times
  Throughput read;
};
base::Result<SharedCeilings> ProbeH2DBesideHostRead(const Checkpoint& checkpoint, uint32_t threads,
                                                    uint64_t chunk_bytes, uint32_t streams,
                                                    int device, const TensorSet* tensors = nullptr);

}  // namespace loadplan::backend
