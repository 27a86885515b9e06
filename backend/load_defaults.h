#pragma once
// The load pipeline's defaults, in one place for the CUDA backend, calibrate, the API, the CLI
// and Python. Measured on the H200 (docs/performance.md, "I/O threads, chunk size and O_DIRECT
// per storage path"): 16 threads of 4 MiB chunks are at the top on the page cache and tmpfs and
// the steadiest on tmpfs; O_DIRECT reads of a cold file go faster in 16 MiB requests.

#include <cstdint>

namespace loadplan::backend {

inline constexpr uint32_t kDefaultIoThreads = 16;
inline constexpr uint64_t kDefaultChunkBytes = uint64_t{4} << 20;         // buffered reads
inline constexpr uint64_t kDefaultDirectChunkBytes = uint64_t{16} << 20;  // O_DIRECT reads

// The chunk a load uses when none is asked for: one pread and one host-to-device copy.
constexpr uint64_t DefaultChunkBytes(bool direct_io) {
  return direct_io ? kDefaultDirectChunkBytes : kDefaultChunkBytes;
}

}  // namespace loadplan::backend
