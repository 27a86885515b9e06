// The plan checker: validates any LoadPlan against its manifest, independently of the
// planner (this target never links simulator/planner/; its tests build plans by hand).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::simulator {

enum class PlanViolationKind : uint8_t {
  kIndex,    // a buffer/call/lane/wait index out of range, or a wait that does not point back
  kBuffers,  // plan buffers differ from the manifest's (names, kinds, residence, sizes, tensor,
             // dtype, shape)
  kCalls,    // the clock differs from the manifest's derive calls, or derive order is wrong
  kArgs,  // a call's kernel, scalars or buffer arguments differ, or an argument passes its buffer
  kOverlap,      // two staged buffers share bytes while both live; resident pool overlap
  kWindow,       // a window misses a reader; a fill or release outside its window
  kArena,        // arena/pool smaller than what is placed, bad rounding, misaligned offset
  kProducer,     // a derive call reads a carry no earlier derive call wrote
  kSteps,        // missing/duplicate/misplaced steps (allocations, fills, launches, releases)
  kLaunchWait,   // a launch does not wait (transitively) for the fills/writers of what it reads
  kFillWait,     // a fill does not wait for earlier occupants of its bytes, or its lane's previous
                 // fill
  kReleaseWait,  // a release or the arena's free does not wait for the last reader
};
std::string_view PlanViolationKindName(PlanViolationKind k);  // "overlap", "fill-wait", ...

struct PlanViolation {
  PlanViolationKind kind = PlanViolationKind::kIndex;
  std::string
      message;  // names the buffer/call/step: "source l0.raw: window [2, 4) misses reader 1"
  bool operator==(const PlanViolation&) const = default;
};

// Every violation found (empty: the plan is valid for the manifest). Checks that depend on
// valid indices are skipped when an index is bad, so one cause gives one report.
// O((steps + buffers) log n) for plans whose wait edges are direct; transitive waits are
// searched backwards from the waiting step.
std::vector<PlanViolation> CheckPlan(const verifier::Manifest& m, const LoadPlan& plan);

}  // namespace loadplan::simulator
