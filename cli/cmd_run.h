// `loadplan run`: verify, plan, check the checkpoint's bindings, then load it on the GPU
// with the CUDA backend (staged sources, derive kernels inside the load) and report the
// predicted vs measured peak, the time split and the end-to-end rate (docs/runtime.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backend/load_defaults.h"
#include "cli/cmd_check.h"
#include "simulator/planner/planner.h"

namespace loadplan::cli {

struct RunCliOptions {
  std::string manifest;         // positional; empty: the embedded gpt-oss-120b example
  std::string checkpoint;       // --checkpoint DIR (a directory, index or .safetensors file)
  bool check = false;           // --check: also run the host backend, compare bytes
  simulator::PlanOptions plan;  // --lanes, --prefetch, --placement
  std::optional<std::string> memory_limit;  // --memory-limit: a size ("12GiB", "500MB", bytes)
  // --reserve: device bytes that must stay free beside the load (the serving process's CUDA
  // context and modules); default: their measurement in the built-in H200 profile (526.8 MiB).
  std::optional<std::string> reserve;
  bool naive = false;               // --naive: every source loaded as a weight, derive after
  bool no_derive = false;           // --no-derive: load only
  bool direct = false;              // --direct: O_DIRECT reads around the page cache
  std::string slice_read = "auto";  // --slice-read auto|runs|span|map (strided slices)
  std::string save_derived;         // --save-derived DIR: derived carries as safetensors
  std::optional<uint32_t>
      io_threads;                   // --io-threads (default: --machine's, else kDefaultIoThreads)
  std::optional<double> chunk_mib;  // --chunk-mib, at least 4 KiB (default: as io_threads)
  std::string machine;              // --machine PROFILE: its io.threads and io.chunk_bytes
  double read_mib = 0;              // --read-mib: pread size within a chunk (0: the chunk)
  uint32_t repeat = 1;              // --repeat: loads in a row, the median is reported
  bool ceilings = false;            // --ceilings: pinned H2D and host-read probes first
  int device = 0;                   // --device
  Format format = Format::kText;    // --format text|json
};

// Prints the report on stdout. Exit code:
// 0 loaded (and, with --check, every compared byte equal);
// 1 verification errors, checkpoint bindings or kernel contracts that do not match, a host
//   check mismatch or host-backend failure, or a measured allocator peak that differs from
//   the prediction;
// 2 unreadable manifest or checkpoint, bad option values, --save-derived write failure;
// 3 no usable CUDA device, the load and the reserve over the device's free memory (checked
//   before the first allocation), out of device memory (or over --memory-limit), any CUDA error.
int RunRun(const RunCliOptions& options);

}  // namespace loadplan::cli
