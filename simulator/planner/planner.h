// The load planner: a pure function from a verified manifest and load options to a LoadPlan.
//
//   derive programs (dataflow order) -> calls c0 c1 ... (the clock)
//   sources: first/last reader -> window [max(0, first - prefetch), last + 1)
//            arrival order (first reader, name) -> lanes round robin (or the buffer's `lane`)
//            windows + aligned sizes -> Place() -> arena offsets; LowerBound() -> lower_bound
//   weights + carries -> resident pool, aligned offsets in name order
//   steps: AllocResident, AllocArena, per call (fills, Launch, Releases), FreeArena, late weights
//
// docs/planner.md documents every choice (weight fill order, wait edges, rounding).
#pragma once

#include <cstdint>
#include <optional>

#include "simulator/placement/placement.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"
#include "verifier/verify.h"

namespace loadplan::simulator {

struct PlanOptions {
  std::optional<uint32_t> lanes;     // overrides load.lanes (0 is read as 1)
  std::optional<uint32_t> prefetch;  // overrides load.prefetch (counts derive calls)
  PlacementPolicy placement =
      PlacementPolicy::kFirstFit;     // arrival order, lowest offset: fast, predictable
  uint64_t alignment = 256;           // of every pool and arena offset (0 is read as 1)
  uint64_t granularity = 2ull << 20;  // device allocator rounding of the two pooled allocations
  // The baseline a staged load is measured against (`loadplan run --naive`): every source is
  // planned as a resident weight and filled before the first derive call (prefetch kNaivePrefetch),
  // so the raw checkpoint and the derived carries are resident together.
  bool naive = false;
};
inline constexpr uint32_t kNaivePrefetch = uint32_t{1} << 30;

// Only a verified manifest can be planned (acyclic derive dataflow, every size evaluates in
// int64 over the box, in name order). Deterministic: the same manifest and options give the
// same plan, whatever the JSON key order was. Sizes that would overflow 64 bits saturate (the
// plan checker then rejects the plan). O(n log n) in buffers and calls plus Place().
LoadPlan Plan(const verifier::VerifiedManifest& verified, const PlanOptions& options = {});

// The largest byte size of `b` over the variable box (its exact size when fixed);
// nullopt when it cannot be bounded in int64 (a manifest the verifier rejects).
std::optional<uint64_t> MaxBufferBytes(const verifier::Buffer& b, const verifier::Box& box);

}  // namespace loadplan::simulator
