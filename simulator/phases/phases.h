// The memory simulator's symbolic side: device bytes per phase (load, once, serve) as
// expressions of the variables, their extrema over the box, the naive peak, device presets.
//
//   load  = resident_bytes_rounded + arena_bytes_rounded            (a constant)
//   once  = resident_bytes_rounded + scratch read/written by `once` programs
//   serve = resident_bytes_rounded + state + scratch + input + output
// Serve-time buffers are separate allocations: their allocator rounding is not predicted.
// Peer buffers live on other devices and count in no phase.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "simulator/plan.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::simulator {

// One end of a phase's range: the value and the point of the box where it is reached.
struct PhaseBound {
  int64_t value = 0;
  verifier::Assignment at;
  bool exact = false;  // false: a sound bound, not known to be reached
  bool operator==(const PhaseBound&) const = default;
};

struct PhasePeak {
  std::string name;                    // "load", "once", "serve"
  verifier::Expr bytes;                // Simplify'd sum of ByteSize expressions
  std::optional<PhaseBound> min, max;  // over the variable box
  std::optional<verifier::Range> at;   // at the user's values (a range if some stay free)
  base::Status error;                  // an evaluation error, when min/max are missing
  bool operator==(const PhasePeak&) const = default;
};

// Bytes per buffer kind: resident kinds (weight, carry) as the aligned pool sizes, the
// arena, and serve kinds as expressions with their range over the box.
struct KindTotal {
  std::string kind;  // "weight", "carry", "arena", "state", "scratch", "input", "output"
  verifier::Expr bytes;
  std::optional<verifier::Range> range;
  bool operator==(const KindTotal&) const = default;
};

struct MemoryPhases {
  std::vector<PhasePeak> phases;   // load, once, serve
  std::optional<PhaseBound> peak;  // the largest phase maximum
  std::string peak_phase;
  std::optional<verifier::Range> peak_at;  // max over phases at the user's values
  uint64_t naive_peak = 0;  // every source resident as a weight: round(resident + sources)
  std::vector<KindTotal> kinds;
  bool operator==(const MemoryPhases&) const = default;
};

// `at` may bind any subset of the variables (others range over their box).
// Cost: one FindExtrema per phase (budget as given).
MemoryPhases ComputePhases(const verifier::Manifest& m, const LoadPlan& plan,
                           const verifier::Assignment& at = {},
                           const verifier::ProofBudget& budget = {});

// Serve-phase buffers (state, scratch, input, output) and the scratch of `once` programs.
std::vector<const verifier::Buffer*> ServeBuffers(const verifier::Manifest& m);
std::vector<const verifier::Buffer*> OnceScratch(const verifier::Manifest& m);

// The widest moment of the arena: the first clock time where the live sources' aligned
// bytes reach their maximum (the lower bound), with the live sources and their readers.
struct WidestMoment {
  ClockTime time{};
  uint64_t bytes = 0;
  std::vector<BufferId> live;  // arrival order
};
std::optional<WidestMoment> FindWidestMoment(const LoadPlan& plan);

// Sizes: "1073741824", "141GiB", "139.8 GiB", "288GB", "512MiB", "2KB", "1.5TiB" (B, KB,
// MB, GB, TB are powers of 10; KiB ... TiB powers of 2; rounded down to a byte).
std::optional<uint64_t> ParseByteSize(std::string_view text);

struct DevicePreset {
  std::string_view name;  // "h200"
  uint64_t bytes = 0;
  bool measured = false;    // true: what cudaMemGetInfo reported; false: nominal (marketed)
  std::string_view source;  // where the figure comes from
  // "total": the device's whole memory (what cudaMemGetInfo calls total), of which the serving
  // process's CUDA context and allocator slack still take a share (--reserve); never "free".
  std::string_view figure = "total";
};
const std::vector<DevicePreset>& DevicePresets();
// The presets' names for a message: "h100, h200, b200, gb300".
std::string PresetNames();
// A preset name (case-insensitive) or a size.
std::optional<uint64_t> ParseDeviceMemory(std::string_view text);

// What --device-memory resolved to: the bytes, the preset matched (null for a size) and the
// label the report prints ("h200 (measured)", "gb300 (nominal)", or the text as given).
struct DeviceMemory {
  uint64_t bytes = 0;
  const DevicePreset* preset = nullptr;
  std::string label;
};
// A preset name (case-insensitive) or a size; nullopt when it is neither.
std::optional<DeviceMemory> ResolveDeviceMemory(std::string_view text);

using base::FormatGiB;  // "139.80 GiB"

}  // namespace loadplan::simulator
