// A small hand-built load plan for the renderer tests (no planner needed): two lanes,
// prefetch 1, two derive programs, three calls, names with quotes, <, &, spaces.
#pragma once

#include <optional>
#include <string>

#include "simulator/plan.h"
#include "simulator/planner.h"
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
  using simulator::PlannedBuffer;
  using simulator::PlannedCall;
  using simulator::Residence;
  using verifier::BufferKind;
  simulator::LoadPlan plan{
      .manifest_name = "sample \"plan\" <x>",
      .lanes = 2,
      .prefetch = 1,
      .derive_order = {"derive.a", "derive.b"},
      .calls = {PlannedCall{.program = "derive.a", .index = 0, .ptr = "/programs/derive.a/calls/0",
                            .reads = {3, 6}, .writes = {0}},
                PlannedCall{.program = "derive.a", .index = 1, .ptr = "/programs/derive.a/calls/1",
                            .reads = {3, 4}, .writes = {0}},
                PlannedCall{.program = "derive.b", .index = 0, .ptr = "/programs/derive.b/calls/0",
                            .reads = {0, 4, 5}, .writes = {1}}},
      .buffers = {PlannedBuffer{.name = "Carry \"one\" <&>", .kind = BufferKind::kCarry, .bytes = 2 * kMiB,
                                .tensor = {}, .lane = {}},
                  PlannedBuffer{.name = "carry2", .kind = BufferKind::kCarry, .bytes = kMiB, .offset = 2 * kMiB,
                                .tensor = {}, .lane = {}},
                  PlannedBuffer{.name = "kv", .kind = BufferKind::kState, .residence = Residence::kServe,
                                .bytes = 8 * kMiB, .tensor = {}, .lane = {}},
                  PlannedBuffer{.name = "src a&b", .kind = BufferKind::kSource, .residence = Residence::kStaged,
                                .bytes = 3 * kMiB, .offset = 0, .tensor = "t.a", .lane = 0,
                                .first_reader = 0, .last_reader = 1, .window_begin = 0, .window_end = 2},
                  PlannedBuffer{.name = "src<2>", .kind = BufferKind::kSource, .residence = Residence::kStaged,
                                .bytes = kMiB, .offset = 3 * kMiB, .tensor = "t.b", .lane = 1,
                                .first_reader = 1, .last_reader = 2, .window_begin = 0, .window_end = 3},
                  PlannedBuffer{.name = "src'3", .kind = BufferKind::kSource, .residence = Residence::kStaged,
                                .bytes = 2 * kMiB, .offset = 4 * kMiB, .tensor = "t.c", .lane = 0,
                                .first_reader = 2, .last_reader = 2, .window_begin = 1, .window_end = 3},
                  PlannedBuffer{.name = "w \\ 1", .kind = BufferKind::kWeight, .bytes = kMiB,
                                .offset = 3 * kMiB, .tensor = "t.w", .lane = 0}},
      .arrival = {3, 4, 5},
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
inline std::optional<simulator::LoadPlan> PlannedSmallManifest(const simulator::PlanOptions& options,
                                                                std::string& error) {
  const verifier::CheckOutput out = verifier::CheckText(kSmallManifest);
  if (!out.parsed || !out.manifest || !out.result.ok()) {
    error = verifier::FormatText(out.result.diags, "small");
    return std::nullopt;
  }
  return simulator::Plan(*out.manifest, options);
}

}  // namespace loadplan::render::testing
