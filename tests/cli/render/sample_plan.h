// A small hand-built load plan for the renderer tests (no planner needed): two lanes,
// prefetch 1, two derive programs, three calls, names with quotes, <, &, spaces.
#pragma once

#include <optional>
#include <string>

#include "simulator/plan.h"
#include "simulator/planner/planner.h"
#include "verifier/diag.h"
#include "verifier/verify.h"

namespace loadplan::render::testing {

inline constexpr uint64_t kMiB = 1ull << 20;

// Clock: t0 derive.a#0, t1 derive.a#1, t2 derive.b#0. Sources (staged):
//   3 "src a&b"  lane 0 [0, 2) offset 0     3 MiB
//   4 "src<2>"   lane 1 [0, 3) offset 3 MiB 1 MiB
//   5 "src'3"    lane 0 [1, 3) offset 4 MiB 2 MiB   (overlaps src a&b on lane 0)
// Shown in the graph: 6 buffers (kv is serve-time) + 3 calls; 7 reads, 3 writes.
inline simulator::LoadPlan SamplePlan() {
  using simulator::BufferId;
  using simulator::CallId;
  using simulator::ClockTime;
  using simulator::Lane;
  using simulator::PlannedBuffer;
  using simulator::PlannedCall;
  using simulator::Residence;
  using verifier::BufferKind;
  auto ids = [](std::initializer_list<uint32_t> v) {
    std::vector<BufferId> out;
    for (uint32_t i : v) out.push_back(BufferId{i});
    return out;
  };
  simulator::LoadPlan plan{
      .manifest_name = "sample \"plan\" <x>",
      .lanes = 2,
      .prefetch = 1,
      .derive_order = {"derive.a", "derive.b"},
      .calls = {PlannedCall{.id = CallId{0},
                            .program = "derive.a",
                            .call_in_program = 0,
                            .ptr = "/programs/derive.a/calls/0",
                            .reads = ids({3, 6}),
                            .writes = ids({0})},
                PlannedCall{.id = CallId{1},
                            .program = "derive.a",
                            .call_in_program = 1,
                            .ptr = "/programs/derive.a/calls/1",
                            .reads = ids({3, 4}),
                            .writes = ids({0})},
                PlannedCall{.id = CallId{2},
                            .program = "derive.b",
                            .call_in_program = 0,
                            .ptr = "/programs/derive.b/calls/0",
                            .reads = ids({0, 4, 5}),
                            .writes = ids({1})}},
      .buffers = {PlannedBuffer{.id = BufferId{0},
                                .name = "Carry \"one\" <&>",
                                .kind = BufferKind::kCarry,
                                .bytes = 2 * kMiB,
                                .tensor = {},
                                .lane = {}},
                  PlannedBuffer{.id = BufferId{1},
                                .name = "carry2",
                                .kind = BufferKind::kCarry,
                                .bytes = kMiB,
                                .offset = 2 * kMiB,
                                .tensor = {},
                                .lane = {}},
                  PlannedBuffer{.id = BufferId{2},
                                .name = "kv",
                                .kind = BufferKind::kState,
                                .residence = Residence::kServe,
                                .bytes = 8 * kMiB,
                                .tensor = {},
                                .lane = {}},
                  PlannedBuffer{.id = BufferId{3},
                                .name = "src a&b",
                                .kind = BufferKind::kSource,
                                .residence = Residence::kStaged,
                                .bytes = 3 * kMiB,
                                .offset = 0,
                                .tensor = "t.a",
                                .lane = Lane{0},
                                .first_reader = CallId{0},
                                .last_reader = CallId{1},
                                .window_begin = ClockTime{0},
                                .window_end = ClockTime{2}},
                  PlannedBuffer{.id = BufferId{4},
                                .name = "src<2>",
                                .kind = BufferKind::kSource,
                                .residence = Residence::kStaged,
                                .bytes = kMiB,
                                .offset = 3 * kMiB,
                                .tensor = "t.b",
                                .lane = Lane{1},
                                .first_reader = CallId{1},
                                .last_reader = CallId{2},
                                .window_begin = ClockTime{0},
                                .window_end = ClockTime{3}},
                  PlannedBuffer{.id = BufferId{5},
                                .name = "src'3",
                                .kind = BufferKind::kSource,
                                .residence = Residence::kStaged,
                                .bytes = 2 * kMiB,
                                .offset = 4 * kMiB,
                                .tensor = "t.c",
                                .lane = Lane{0},
                                .first_reader = CallId{2},
                                .last_reader = CallId{2},
                                .window_begin = ClockTime{1},
                                .window_end = ClockTime{3}},
                  PlannedBuffer{.id = BufferId{6},
                                .name = "w \\ 1",
                                .kind = BufferKind::kWeight,
                                .bytes = kMiB,
                                .offset = 3 * kMiB,
                                .tensor = "t.w",
                                .lane = Lane{0}}},
      .arrival = ids({3, 4, 5}),
      .resident_bytes = 4 * kMiB,
      .resident_bytes_rounded = 4 * kMiB,
      .arena_bytes = 6 * kMiB,
      .arena_bytes_rounded = 6 * kMiB,
      .lower_bound = 6 * kMiB,
      .steps = {},
  };
  return plan;
}

// A small valid manifest for planner-made plans: three derive programs (derive.c reads
// the carries derive.a and derive.b write), three sources, a weight read only by derive.
inline constexpr const char* kSmallManifest = R"json({
  "schema": 1, "name": "small \"<&>\"", "load": {"lanes": 2, "prefetch": 1},
  "kernels": {
    "copy": {"params": {"src": {"access": "read", "dtype": "U8", "extent": "n"},
                        "dst": {"access": "write", "dtype": "U8", "extent": "n"}, "n": "scalar"}},
    "add": {"params": {"a": {"access": "read", "dtype": "U8", "extent": "n"},
                       "b": {"access": "read", "dtype": "U8", "extent": "n"},
                       "dst": {"access": "write", "dtype": "U8", "extent": "n"}, "n": "scalar"}}
  },
  "buffers": {
    "a.raw": {"kind": "source", "tensor": "a", "dtype": "U8", "shape": [1024]},
    "b raw <2>": {"kind": "source", "tensor": "b", "dtype": "U8", "shape": [2048]},
    "c.raw": {"kind": "source", "tensor": "c", "dtype": "U8", "shape": [1024]},
    "w": {"kind": "weight", "tensor": "w", "dtype": "U8", "shape": [1024]},
    "a": {"kind": "carry", "dtype": "U8", "shape": [1024]},
    "b": {"kind": "carry", "dtype": "U8", "shape": [2048]},
    "c": {"kind": "carry", "dtype": "U8", "shape": [1024], "export": true},
    "d": {"kind": "carry", "dtype": "U8", "shape": [1024], "export": true}
  },
  "programs": {
    "derive.a": {"derive": true, "calls": [{"kernel": "copy", "grid": [1], "args": {"src": "a.raw", "dst": "a", "n": 1024}}]},
    "derive.b": {"derive": true, "calls": [{"kernel": "copy", "grid": [1], "args": {"src": "b raw <2>", "dst": "b", "n": 2048}}]},
    "derive.c": {"derive": true, "calls": [
      {"kernel": "add", "grid": [1], "args": {"a": "a", "b": "c.raw", "dst": "c", "n": 1024}},
      {"kernel": "add", "grid": [1], "args": {"a": "b", "b": "w", "dst": "d", "n": 1024}}]}
  }
})json";

// kSmallManifest, verified and planned by the real planner; nullopt (with the
// diagnostics in `error`) when it does not verify.
inline std::optional<simulator::LoadPlan> PlannedSmallManifest(
    const simulator::PlanOptions& options, std::string& error) {
  const verifier::CheckOutput out = verifier::CheckText(kSmallManifest);
  if (!out.result.verified) {
    error = verifier::FormatText(out.result.diags, "small");
    return std::nullopt;
  }
  return simulator::Plan(*out.result.verified, options);
}

}  // namespace loadplan::render::testing
