#pragma once
// The load pipeline's defaults, in one place for the CUDA backend, calibrate, the API, the CLI
// and Python. Measured on the H200 (docs/performance.md, "I/O threads, chunk size and O_DIRECT
// per storage path", two runs of `PARTS=sweep`): 12 threads of 4 MiB chunks are at the top on
// the page cache and tmpfs of the 8-layer checkpoint (16 threads: the same within the spread;
// 24 threads and 8 MiB chunks: slower there; on the full model 16 x 8 MiB led by less than the
// spread), and O_DIRECT reads of a cold file gain nothing measurable from 16-32 threads or
// 16-64 MiB requests (1.45-2.28 GB/s against 1.74-2.01: the disk is the limit). Checked again
// (docs/performance.md, "Issue 13 closed"): 0.5-2 MiB chunks are slower (per-copy and per-read
// costs), 8-16 MiB chunks read 4 MiB at a time too (the staging leaves the L3), and 16 threads
// lead by 0.6-6% on the full 65 GB model only, level on the 8-layer checkpoint.

#include <cstdint>

namespace loadplan::backend {

inline constexpr uint32_t kDefaultIoThreads = 12;                  // pread threads
inline constexpr uint64_t kDefaultChunkBytes = uint64_t{4} << 20;  // one pread + one copy

}  // namespace loadplan::backend
