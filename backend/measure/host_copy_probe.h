// The host's memory copy bandwidth: the ceiling a load from the page cache or tmpfs shares
// with its DMA (every byte is copied once by the CPU, out of the cache into pinned memory, and
// read once more by the copy engine), and the denominator of a multi-GPU load's aggregate rate.
#pragma once

#include <cstdint>

#include "backend/throughput.h"
#include "base/status.h"

namespace loadplan::backend {

// `threads` threads each memcpy their share of `bytes` from one host buffer into another (both
// touched first, so no page is faulted in the timed part); the best of `repeats` after one
// warm-up. GB/s counts each byte once (the copy reads and writes it). kInvalidInput for 0
// bytes or threads; kOutOfMemory when the buffers cannot be had.
base::Result<Throughput> ProbeHostCopy(uint64_t bytes, uint32_t threads, int repeats = 3);

}  // namespace loadplan::backend
