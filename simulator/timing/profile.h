// A machine profile: the measured rates a load-time prediction needs (docs/load-time.md has
// the schema). `loadplan calibrate` writes one on a GPU machine; `plan --machine` reads it.
// Rates are bytes per second (10^9 B/s = 1 GB/s), times are seconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "simulator/timing/slice_read.h"

namespace loadplan::simulator::timing {

inline constexpr int kProfileVersion = 1;
inline constexpr std::string_view kProfileSchema = "loadplan-machine-profile";

struct MachineProfile {
  std::string device;    // "NVIDIA H200"
  std::string measured;  // when ("2026-12-02T08:30:00Z"), or what the figures are
  std::string source;    // "loadplan calibrate" or "built-in default (docs/performance.md)"
  bool builtin = false;  // the documented default, not a measurement of this machine
  // The I/O pool the pipeline rates were measured with (the CUDA backend's defaults).
  uint32_t io_threads = 12;
  uint64_t chunk_bytes = uint64_t{4} << 20;
  // Rates, bytes per second.
  double pinned_h2d = 0;       // pinned host -> device, all streams together
  double page_cache_read = 0;  // pread from the page cache into pinned memory, io_threads threads
  double direct_read = 0;      // a file not in the page cache (evicted), io_threads threads
  double pipeline_hot = 0;     // page cache -> pinned -> device through the I/O pool (bulk)
  double pipeline_cold = 0;    // the same from an evicted file
  // The least stream time of one fill, however small (job setup, events, a tiny pread and
  // copy): measured as the wall time per fill of many 16 KiB fills.
  double per_fill_s = 0;
  // One small pread from the page cache on each of the I/O threads while all read, what each
  // run of a strided slice pays (slice_read.h): 0 where the profile has no figure
  // (PerRunSeconds gives the default then).
  double per_run_s = 0;
  // One page of a strided slice's span faulted in through the file's mapping, on each of the
  // I/O threads at once (slice_read.h, the map read): 0 where the profile has no figure
  // (PerPageSeconds gives the default then).
  double per_page_s = 0;
  // One run of a mapped slice copied out, beside its bytes, the same way (the map read's other
  // cost): 0 where the profile has no figure (PerMapRunSeconds gives the default then).
  double per_map_run_s = 0;
  // Derive kernels: bytes read + written per second, by registry name.
  std::map<std::string, double> kernels;
  double default_kernel_rate = 0;     // a kernel the profile does not list
  double launch_overhead_s = 0;       // one launch, back to back
  double context_start_s = 0;         // cudaSetDevice + first call, eager module loading
  uint64_t context_device_bytes = 0;  // cudaMemGetInfo total - free after the context started
  double setup_s = 0;                 // streams, pinned buffers, I/O threads (IoPool::Create)
  double alloc_s = 0;                 // one large cudaMalloc
  bool operator==(const MachineProfile&) const = default;
};

// The documented default: the H200's calibration of 2026-12-02T09:25Z (examples/profiles/
// h200.json), labelled as such (builtin = true).
MachineProfile DefaultH200Profile();

// Parses a profile; an error names the JSON pointer of the offending value ("/rates/pinned_h2d:
// expected a number > 0"), an unknown or duplicate key, a missing one, or a wrong version.
base::Result<MachineProfile> ParseProfile(std::string_view text);
base::Result<MachineProfile> ReadProfileFile(const std::string& path);
nlohmann::json ProfileJson(const MachineProfile& p);

// The profile's per_run_s, or kDefaultPerRunSeconds where it has none.
double PerRunSeconds(const MachineProfile& p);
// The profile's per_page_s, or kDefaultPerPageSeconds where it has none.
double PerPageSeconds(const MachineProfile& p);
// The profile's per_map_run_s, or kDefaultPerMapRunSeconds where it has none.
double PerMapRunSeconds(const MachineProfile& p);

// The costs a strided slice's read is weighed by (slice_read.h) on this machine: buffered, the
// page cache's read rate and the map's per-page and per-run costs; with O_DIRECT, the direct read
// rate and no map (an O_DIRECT load reads a map's slices by span).
SliceReadCosts SliceCostsOf(const MachineProfile& p, bool direct_io = false);

// The rate of kernel `name` (its own, else the default) and whether it was measured.
double KernelRate(const MachineProfile& p, std::string_view name, bool* measured = nullptr);

}  // namespace loadplan::simulator::timing
