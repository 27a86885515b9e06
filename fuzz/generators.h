// RapidCheck generators of manifests that are valid by construction, of arbitrary JSON
// values and of byte-mutated texts (docs/reliability.md says what each property checks).
//
// A generated manifest (GenManifest) verifies with no diagnostic at all, errors or lints:
//   vars      0-3, names sharing prefixes ("b", "batch", "batch.x"), bounds biased to
//             0, equal endpoints and large values (sizes stay inside int64 everywhere);
//   derive    a random dataflow DAG over the registry's real derive kernels
//             (`copy` U8 -> U8 with n = the destination's size, `cast_bf16_f32`), calls
//             spread over derive programs whose names are unrelated to the dataflow order,
//             deep chains (each step is biased toward reading the newest carry), fan-out,
//             sources read only by derive calls, weights read by serving calls;
//   serving   programs with `batch`/`graph`/`once` flags, state/scratch/input/output/peer
//             buffers whose shapes use the variables, collectives, and one generated kernel
//             per call whose every buffer parameter has its own scalar extent `n_<param>`,
//             passed exactly the bound buffer's element count;
//   load      lanes 1-4, prefetch 0-3, explicit lanes on some checkpoint buffers;
//   names     with '/', '~', '.', ' ' (pointer escaping) and shared prefixes.
// Sizes are tiny (most buffers under 64 elements) so the host backend can run each case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <rapidcheck.h>

#include "verifier/manifest.h"

namespace loadplan::fuzz {

// A manifest valid by construction, pointers assigned (AssignPointers).
rc::Gen<verifier::Manifest> GenManifest();

// Any JSON value: nested objects and arrays, manifest-like keys ("schema", "buffers",
// "kind", ...), boundary numbers (0, -1, 2^63 - 1, 2^64, 1e400 as a double), odd strings.
rc::Gen<nlohmann::json> GenJson();

// GenJson() as text (invalid UTF-8 in strings replaced by U+FFFD, so dumping never throws).
rc::Gen<std::string> GenJsonText();

// `base` with 1-8 random edits (mostly 1 or 2, so half the results are still JSON): byte flips,
// deletions, insertions of JSON tokens
// ("{", "\"", "-1", "1e999", "\\u0000", ...), duplicated or truncated spans.
rc::Gen<std::string> GenMutatedText(std::string base);

// The texts byte mutation starts from: examples/*.json, tests/data/**/*.json (small ones)
// under `source_dir`. Empty when the directory is missing.
std::vector<std::string> SeedTexts(const std::string& source_dir, size_t max_bytes = 64 * 1024);

}  // namespace loadplan::fuzz
