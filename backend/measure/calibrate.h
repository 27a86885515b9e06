// `loadplan calibrate`: measures a machine profile (simulator/timing/profile.h) on a GPU
// machine: context start and its device memory, pinned H2D, page-cache and evicted-file read
// rates and the I/O pool's pipeline rates from a scratch file, per-chunk cost, every registry
// kernel's rate, launch overhead. docs/load-time.md says what each figure is.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "backend/load_defaults.h"
#include "base/status.h"
#include "simulator/timing/profile.h"

namespace loadplan::backend {

struct CalibrateOptions {
  int device = 0;
  std::string dir = ".";  // where the scratch file is written (then removed)
  uint64_t scratch_bytes = uint64_t{4} << 30;
  uint64_t cold_bytes = uint64_t{2} << 30;  // read from the evicted file per cold measurement
  uint32_t io_threads = kDefaultIoThreads;  // the CUDA backend's defaults
  uint64_t chunk_bytes = kDefaultChunkBytes;
  // --choose-io: time the hot pipeline for a grid of I/O threads x chunk sizes (8-24 threads,
  // 2-8 MiB) beside the given pair, and keep the fastest in the profile's `io` (the given pair
  // unless another is more than 2% faster): the pair `run --machine` and Python's
  // `load(machine=...)` then use on this machine.
  bool choose_io = false;
  std::function<void(const std::string&)> note;  // progress lines ("pinned H2D 55.1 GB/s")
};

// Must be the process's first CUDA work (it times the context start; it calls
// PrepareCudaProcess itself). kDevice without a usable device, kIo when the scratch file
// cannot be written, read or evicted; device memory and the scratch file are freed on every path.
base::Result<simulator::timing::MachineProfile> Calibrate(const CalibrateOptions& options);

}  // namespace loadplan::backend
