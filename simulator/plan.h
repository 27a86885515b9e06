// The load plan: a value computed by a pure function of a verified manifest and
// load options (simulator/planner.h). Backends execute it and never plan again.
//
// The clock: time t is the index of a derive call in plan order (derive programs
// in dataflow order, their calls flattened). Lifetimes are half-open [begin, end)
// everywhere. A source's window is [max(0, first_reader - prefetch), last_reader + 1);
// it occupies [offset, offset + bytes) of the staging arena only inside its window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "verifier/manifest.h"

namespace loadplan::simulator {


// One derive call on the plan's clock.
struct PlannedCall {
  std::string program;
  uint32_t index = 0;       // call index inside its program
  std::string ptr;          // /programs/<p>/calls/<i>
  std::vector<uint32_t> reads;   // indices into LoadPlan::buffers read (read/readwrite)
  std::vector<uint32_t> writes;  // indices into LoadPlan::buffers written
  bool operator==(const PlannedCall&) const = default;
};

enum class Residence : uint8_t {
  kResident,  // weights and carries: one pooled allocation for the model's life
  kStaged,    // sources: in the staging arena inside their window
  kServe,     // state, scratch, input, output: allocated after load (not by the plan)
  kPeer,      // another device's memory: counts in no phase
  kSkipped,   // a source no derive call reads: never loaded (lint L2 reports it)
};

// A buffer as the plan sees it.
struct PlannedBuffer {
  std::string name;
  verifier::BufferKind kind = verifier::BufferKind::kWeight;
  Residence residence = Residence::kResident;
  uint64_t bytes = 0;   // exact for fixed shapes; the maximum over the box for variable ones
  uint64_t offset = 0;  // in the resident pool (kResident) or the arena (kStaged), aligned
  std::optional<std::string> tensor;
  // kStaged and fills of weights:
  std::optional<uint32_t> lane;
  // kStaged only (clock times):
  uint32_t first_reader = 0, last_reader = 0;
  uint32_t window_begin = 0, window_end = 0;  // half-open
  bool operator==(const PlannedBuffer&) const = default;
};

enum class StepKind : uint8_t {
  kAllocResident,  // the resident pool (resident_bytes_rounded)
  kAllocArena,     // the staging arena (arena_bytes_rounded)
  kFill,           // copy a checkpoint tensor into its buffer (a weight or a source), on `lane`
  kLaunch,         // run derive call `call`
  kRelease,        // a source's window ends: its bytes may be reused
  kFreeArena,      // after the last derive call
};
// Step semantics (docs/planner.md): kAllocResident/kAllocArena are synchronous and
// complete before any later step starts. Every other step may start once the steps in
// `waits` are done; a sequential backend simply runs steps in order. Weight fills of
// weights no derive call reads come after kFreeArena (they need no arena).

struct Step {
  StepKind kind = StepKind::kLaunch;
  std::optional<uint32_t> buffer;  // kFill, kRelease
  std::optional<uint32_t> call;    // kLaunch
  std::optional<uint32_t> lane;    // kFill
  std::vector<uint32_t> waits;     // indices of earlier steps this one must wait for
  bool operator==(const Step&) const = default;
};

struct LoadPlan {
  std::string manifest_name;
  uint32_t lanes = 1;
  uint32_t prefetch = 0;
  uint64_t alignment = 256;             // offsets in pool and arena
  uint64_t granularity = 2ull << 20;    // device allocator rounding (cudaMalloc: 2 MiB on the H200)
  std::vector<std::string> derive_order;
  std::vector<PlannedCall> calls;       // the clock
  std::vector<PlannedBuffer> buffers;   // every manifest buffer, sorted by name
  std::vector<uint32_t> arrival;        // staged buffers in arrival order (first reader, then name)
  uint64_t resident_bytes = 0;          // pool size (sum of aligned resident buffers)
  uint64_t resident_bytes_rounded = 0;  // rounded up to granularity
  uint64_t arena_bytes = 0;             // max over staged buffers of offset + bytes
  uint64_t arena_bytes_rounded = 0;
  uint64_t lower_bound = 0;             // widest set of live sources (aligned sizes)
  std::string placement = "first-fit";  // the placement policy that set the arena offsets
  std::vector<Step> steps;
  bool operator==(const LoadPlan&) const = default;
};

}  // namespace loadplan::simulator
