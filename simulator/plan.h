// The load plan: a value computed by a pure function of a verified manifest and load
// options (simulator/planner/planner.h). It is self-contained: a backend executes a LoadPlan plus a
// checkpoint and never looks anything up in the manifest (each call carries its kernel, its
// evaluated scalars and its buffer arguments with byte ranges; each buffer its tensor, dtype
// and shape). Backends never plan again.
//
// The clock: time t is the index of a derive call in plan order (derive programs in dataflow
// order, their calls flattened), so call `CallId{t}` runs at `ClockTime{t}`. Lifetimes are
// half-open [begin, end) everywhere. A source's window is
// [max(0, first_reader - prefetch), last_reader + 1); it occupies [offset, offset + bytes) of
// the staging arena only inside its window.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/registry/registry.h"
#include "simulator/placement/placement.h"
#include "verifier/manifest.h"

namespace loadplan::simulator {

// Distinct id types: a buffer, a call, a step, a time and a lane never mix. Index() gives the
// position in the vector the id points into.
enum class BufferId : uint32_t {};   // position in LoadPlan::buffers (manifest buffers, name order)
enum class CallId : uint32_t {};     // position in LoadPlan::calls
enum class StepIndex : uint32_t {};  // position in LoadPlan::steps
enum class ClockTime : uint32_t {
};                              // a time on the plan's clock (window bounds may be calls.size())
enum class Lane : uint32_t {};  // a logical load stream: its fills run one after another

template <class Id>
constexpr uint32_t Index(Id id) {
  return static_cast<uint32_t>(id);
}
constexpr ClockTime TimeOf(CallId c) { return ClockTime{Index(c)}; }

// A buffer argument of a planned call: the call touches bytes [0, bytes) of `buffer` (the
// prefix the param's extent covers; docs/planner.md, "Units and conventions"), as `access` says.
// `bytes` is the extent evaluated with the call's scalars, not clamped to the buffer: the plan
// checker rejects a plan whose argument passes its buffer, or whose extent did not evaluate
// (nullopt).
struct PlannedArg {
  std::string param;
  BufferId buffer{};
  verifier::Access access = verifier::Access::kRead;
  std::optional<uint64_t> bytes;
  bool operator==(const PlannedArg&) const = default;
};

struct PlannedScalar {
  std::string param;
  int64_t value = 0;
  bool operator==(const PlannedScalar&) const = default;
};

// One derive call on the plan's clock, with everything a backend needs to launch it.
struct PlannedCall {
  CallId id{};  // its position in LoadPlan::calls, = its clock time
  std::string program;
  uint32_t call_in_program = 0;  // call index inside its program
  std::string ptr;               // /programs/<p>/calls/<i>
  std::string kernel;            // the kernel's name (empty for a collective)
  // The registry's id when the backends implement the kernel (its declaration then matches the
  // registry's: rule P9); nullopt for another runtime's kernel, which backends refuse.
  std::optional<kernels::KernelId> kernel_id;
  std::vector<PlannedScalar> scalars;  // evaluated (derive scalars are variable-free), by param
  std::vector<PlannedArg> args;        // buffer params, by param
  std::vector<BufferId> reads;         // buffers read (read/readwrite), sorted, unique
  std::vector<BufferId> writes;        // buffers written
  bool operator==(const PlannedCall&) const = default;
};

enum class Residence : uint8_t {
  kResident,  // weights and carries: one pooled allocation for the model's life
  kStaged,    // sources: in the staging arena inside their window
  kServe,     // state, scratch, input, output: allocated after load (not by the plan)
  kPeer,      // another device's memory: counts in no phase
  kSkipped,   // a source no derive call reads: never loaded (lint L2 reports it)
};

// Which residence a buffer kind has: a definition the planner and the plan checker share.
inline Residence ResidenceOf(verifier::BufferKind kind) {
  using verifier::BufferKind;
  switch (kind) {
    case BufferKind::kWeight:
    case BufferKind::kCarry: return Residence::kResident;
    case BufferKind::kSource: return Residence::kStaged;
    case BufferKind::kPeer: return Residence::kPeer;
    default: return Residence::kServe;
  }
}

// A buffer as the plan sees it.
struct PlannedBuffer {
  BufferId id{};
  std::string name;
  verifier::BufferKind kind =
      verifier::BufferKind::kWeight;  // a source is a weight in a naive plan
  Residence residence = Residence::kResident;
  base::Dtype dtype = base::Dtype::kU8;
  std::optional<std::vector<uint64_t>> shape;  // set when the shape is variable-free
  uint64_t bytes = 0;   // exact for fixed shapes; the maximum over the box for variable ones
  uint64_t offset = 0;  // in the resident pool (kResident) or the arena (kStaged), aligned
  std::optional<std::string> tensor;
  // Or the whole checkpoint tensors read one after another into it, in this order (the
  // manifest's `tensors`): a fill reads each at the running offset.
  std::optional<std::vector<std::string>> tensors;
  // With `tensor`: the part of it bound (the manifest's `slice`, schema 2).
  std::optional<verifier::TensorSlice> slice;
  bool exported = false;  // the manifest exports it to serving (a carry loaded models hand out)
  // kStaged and fills of weights:
  std::optional<Lane> lane;
  // kStaged only:
  CallId first_reader{}, last_reader{};
  ClockTime window_begin{}, window_end{};  // half-open
  bool operator==(const PlannedBuffer&) const = default;
};

// The checkpoint tensors a fill of `b` reads, in order (its `tensor`, then its `tensors`); the
// views point into `b`. Empty for buffers no fill reads.
inline std::vector<std::string_view> BoundTensors(const PlannedBuffer& b) {
  std::vector<std::string_view> out;
  if (b.tensor) out.emplace_back(*b.tensor);
  if (b.tensors) out.insert(out.end(), b.tensors->begin(), b.tensors->end());
  return out;
}

// The reads a fill of `b` makes: 1, or for a slice along dimension d > 0 one run per index of
// the dimensions before d (the buffer's there are its tensor's). Each is its own request, so
// a column slice of a big matrix costs a request per row (simulator/timing's model).
inline uint64_t FillRuns(const PlannedBuffer& b) {
  if (!b.slice || b.slice->dim == 0 || !b.shape) return 1;
  uint64_t runs = 1;
  for (uint64_t d = 0; d < b.slice->dim && d < b.shape->size(); ++d) runs *= (*b.shape)[d];
  return std::max<uint64_t>(runs, 1);
}

enum class StepKind : uint8_t {
  kAllocResident,  // the resident pool (resident_bytes_rounded)
  kAllocArena,     // the staging arena (arena_bytes_rounded)
  kFill,           // copy its checkpoint tensor(s) into a weight or a source, on `lane`
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
  std::optional<BufferId> buffer;  // kFill, kRelease
  std::optional<CallId> call;      // kLaunch
  std::optional<Lane> lane;        // kFill
  std::vector<StepIndex> waits;    // earlier steps this one must wait for
  bool operator==(const Step&) const = default;
};

struct LoadPlan {
  std::string manifest_name;
  uint32_t lanes = 1;
  uint32_t prefetch = 0;
  uint64_t alignment = 256;           // offsets in pool and arena
  uint64_t granularity = 2ull << 20;  // device allocator rounding (cudaMalloc: 2 MiB on the H200)
  std::vector<std::string> derive_order;
  std::vector<PlannedCall> calls;       // the clock
  std::vector<PlannedBuffer> buffers;   // every manifest buffer, sorted by name
  std::vector<BufferId> arrival;        // staged buffers in arrival order (first reader, then name)
  uint64_t resident_bytes = 0;          // pool size (sum of aligned resident buffers)
  uint64_t resident_bytes_rounded = 0;  // rounded up to granularity
  uint64_t arena_bytes = 0;             // max over staged buffers of offset + bytes
  uint64_t arena_bytes_rounded = 0;
  uint64_t lower_bound = 0;  // widest set of live sources (aligned sizes)
  PlacementPolicy placement = PlacementPolicy::kFirstFit;  // the policy that set the arena offsets
  bool naive = false;  // PlanOptions::naive: sources planned as resident weights
  std::vector<Step> steps;
  bool operator==(const LoadPlan&) const = default;

  // Precondition: the id is in range (the executor and the plan checker check ids first).
  const PlannedBuffer& buffer(BufferId id) const { return buffers[Index(id)]; }
  const PlannedCall& call(CallId id) const { return calls[Index(id)]; }
  const Step& step(StepIndex i) const { return steps[Index(i)]; }
};

// Totals over a plan (plan_totals.h, header-only so that the plan checker, which never links
// the planner, can use them too): FillBytes, DerivedCarries, LoadPeakBytes.

}  // namespace loadplan::simulator

// The ids print as their numbers ("step 12", "window [3, 7)"), as before they were typed.
template <class Id>
requires(std::is_same_v<Id, loadplan::simulator::BufferId> ||
         std::is_same_v<Id, loadplan::simulator::CallId> ||
         std::is_same_v<Id, loadplan::simulator::StepIndex> ||
         std::is_same_v<Id, loadplan::simulator::ClockTime> ||
         std::is_same_v<Id, loadplan::simulator::Lane>) struct fmt::formatter<Id>
    : fmt::formatter<uint32_t> {
  template <class FormatContext>
  auto format(Id id, FormatContext& ctx) const {
    return fmt::formatter<uint32_t>::format(loadplan::simulator::Index(id), ctx);
  }
};
