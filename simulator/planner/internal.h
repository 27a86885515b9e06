// Internal pieces of the planner shared by simulator/plan_*.cc (not a public interface).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/plan.h"
#include "simulator/planner/planner.h"
#include "verifier/manifest.h"

namespace loadplan::simulator::detail {

// The clock: the derive programs of `order` (the verifier's dataflow order), their calls
// flattened and resolved (kernel, scalars, buffer arguments with extents, read/write sets).
// `m` is sorted by name.
std::vector<PlannedCall> BuildCalls(const verifier::Manifest& m,
                                    const std::vector<std::string>& order);

// Every manifest buffer (name order) with id, residence, dtype, shape and byte size; no offsets.
// `naive`: sources become resident weights (PlanOptions::naive).
std::vector<PlannedBuffer> BuildBuffers(const verifier::Manifest& m, bool naive);

// Sets first/last reader and window of each staged source (kSkipped when nothing reads it),
// the arrival order and the lanes of sources and weights.
void AssignWindowsAndLanes(LoadPlan& plan);

// Offsets in the resident pool (name order) and the arena (Place), sizes, lower bound.
void AssignOffsets(LoadPlan& plan, const PlanOptions& options);

// The step list with its wait edges.
std::vector<Step> BuildSteps(const LoadPlan& plan);

// When a weight read by derive calls is filled: max(0, first reader - prefetch); nullopt
// for weights no derive call reads (filled after the arena is freed). Indexed by buffer.
std::vector<std::optional<ClockTime>> WeightFillTimes(const LoadPlan& plan);

}  // namespace loadplan::simulator::detail
