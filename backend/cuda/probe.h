// Ceilings measured in the same run as a load: the pinned host-to-device copy rate and the
// host read rate (page cache -> pinned memory with pread, the I/O threads' own first half).
#pragma once

#include <cstdint>
#include <string>

#include "backend/checkpoint/checkpoint.h"
#include "base/status.h"

namespace loadplan::backend {

struct Throughput {
  uint64_t bytes = 0;
  double seconds = 0;  // the best repetition
  [[nodiscard]] double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
};

// `bytes` from one pinned buffer to one device buffer, split over `streams` streams, timed
// with events around all of them; the best of `repeats` after one warm-up. The CUDA error
// (kDevice, kOutOfMemory) when an allocation or copy fails.
base::Result<Throughput> ProbePinnedH2D(uint64_t bytes, uint32_t streams, int device,
                                        int repeats = 3);

// Every file of the checkpoint read once with pread in `chunk_bytes` chunks by `threads`
// threads into pinned buffers (no device copy): the read ceiling of the I/O pool when the
// files are in the page cache. kIo when a file cannot be opened or a read comes up short.
base::Result<Throughput> ProbeHostRead(const Checkpoint& checkpoint, uint32_t threads,
                                       uint64_t chunk_bytes);

}  // namespace loadplan::backend
