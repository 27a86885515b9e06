// `loadplan calibrate`: measures this machine's load-time profile (docs/load-time.md) and
// writes it as JSON for `loadplan plan --machine`.
#pragma once

#include <cstdint>
#include <string>

#include "backend/load_defaults.h"

namespace loadplan::cli {

struct CalibrateCliOptions {
  std::string out;                                   // -o FILE (default: stdout)
  int device = 0;                                    // --device
  std::string dir = ".";                             // --dir: where the scratch file goes
  double scratch_gib = 4;                            // --scratch-gib: scratch file size
  uint32_t io_threads = backend::kDefaultIoThreads;  // --io-threads (the rates hold for this pool)
  bool choose_io = false;  // --choose-io: the fastest threads x chunk of a grid, into the profile
  double chunk_mib = backend::kDefaultChunkBytes / 1048576.0;  // --chunk-mib
};

// Exit code, as `run`'s: 0 written; 2 the scratch file or the output cannot be written; 3 no
// usable CUDA device, or a CUDA error while measuring.
int RunCalibrate(const CalibrateCliOptions& options);

}  // namespace loadplan::cli
