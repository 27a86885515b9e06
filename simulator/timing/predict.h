// Load-time prediction: the wall time of executing a LoadPlan on the CUDA backend, and its
// phases, from a machine profile. A pure function of (plan, profile, options); docs/load-time.md
// derives the model from how the backend schedules:
//
//   executor (host, plan order) --Fill--> I/O pool queue (FIFO; every fill cut into chunks that
//     all io_threads threads take in turn: pread into a pinned slot, cudaMemcpyAsync)
//   one byte stream at the pipeline rate R (hot: page cache; cold: evicted file), gated per fill
//     by its wait edges: a source whose bytes an earlier source used waits for that source's last
//     reader (a launch) -- a stall; the 2 x threads pinned slots read ahead during a stall, and
//     those bytes go at the pinned H2D rate when the gate opens
//   a fill takes at least the profile's per-fill time (a tiny fill's fixed cost)
//   launches on one compute stream: each after the fills it reads (and the previous launch),
//     launch overhead + (bytes read + written) / the kernel's rate
//   FreeArena drains the pool (host): fills after it (weights no call reads) start after
//     everything before; wall = first fill submitted .. last copy or launch done (as `run` times
//     it)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/plan.h"
#include "simulator/timing/profile.h"

namespace loadplan::simulator::timing {

enum class Cache : uint8_t { kHot, kCold };  // checkpoint in the page cache / evicted
std::string_view CacheName(Cache c);         // "hot", "cold"

struct PredictOptions {
  Cache cache = Cache::kHot;
  bool derive = true;  // false: `run --no-derive` (launches keep their order, run nothing)
};

struct LoadTimePrediction {
  Cache cache = Cache::kHot;
  double wall_s = 0;    // first fill to the last copy or launch done (run's wall_s)
  double read_s = 0;    // fill bytes at the read rate of the cache state (reads overlap copies)
  double copy_s = 0;    // fill bytes at the pinned H2D rate (copies overlap reads)
  double derive_s = 0;  // sum of the launches' device time
  double stall_s = 0;   // time the byte stream waited for a launch (wait edges)
  double tail_s = 0;    // derive work left after the last copy
  double setup_s = 0;   // context start + I/O pool + allocations: before the first fill
  double total_s = 0;   // setup_s + wall_s
  double rate = 0;      // the byte stream's rate, bytes/s
  uint64_t fill_bytes = 0, chunks = 0;
  uint32_t fills = 0, launches = 0, stalls = 0;
  // Runs of strided slices read a pread each (runs smaller than a chunk), and the stream time
  // they add (runs x per-run cost / threads): the term that dominates a column split's load.
  uint64_t slice_runs = 0;
  double slice_runs_s = 0;
  // Strided slices by how the load reads them (slice_read.h's choice): by runs, by their
  // covering span (the bytes between the runs at the read rate: slice_span_s), by a map of the
  // span's pages (slice_map_pages and slice_map_runs at the profile's per-page and per-run
  // costs: slice_map_s), or by runs because the manifest gives no extent to weigh the others by.
  uint32_t slices_by_runs = 0, slices_by_span = 0, slices_by_map = 0, slices_unweighed = 0;
  [[nodiscard]] uint32_t slices_read_by_runs() const { return slices_by_runs + slices_unweighed; }
  [[nodiscard]] uint32_t strided_slices() const {
    return slices_read_by_runs() + slices_by_span + slices_by_map;
  }
  double slice_span_s = 0;
  uint64_t slice_map_pages = 0;
  uint64_t slice_map_runs = 0;  // the mapped slices' runs, each a copy (the per-run cost)
  double slice_map_s = 0;
  uint64_t read_bytes = 0;  // from the checkpoint: fill_bytes plus the spans' gaps
  std::vector<std::string> unmeasured_kernels;  // timed at the profile's default rate
  bool operator==(const LoadTimePrediction&) const = default;
};

// Follows the plan's steps in order (O(steps + wait edges)). The plan's steps are trusted as
// the plan checker accepts them (waits point at earlier steps); others are ignored.
LoadTimePrediction PredictLoad(const LoadPlan& plan, const MachineProfile& profile,
                               const PredictOptions& options = {});

nlohmann::json PredictionJson(const LoadTimePrediction& p, const MachineProfile& profile);
std::string PredictionText(const LoadTimePrediction& p, const MachineProfile& profile);

}  // namespace loadplan::simulator::timing
