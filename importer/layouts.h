// `import --layout transformers`: the weights named and shaped as transformers' model classes
// hold them after their load-time conversions (transformers 5.17, conversion_mapping.py):
// per-expert MoE tensors stacked into one parameter per projection (gate and up side by side
// per expert), and renames. A stack is a buffer that binds its tensors in order
// (`"tensors"`), so the read itself lays them out: no derive program, no staging, no second
// copy of anything (docs/import.md, "Layouts").
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "importer/hf_config.h"
#include "importer/tensors.h"
#include "verifier/builder.h"

namespace loadplan::importer {

// One stacked parameter: for each index 0..N-1, the tensor of every part, in part order
// (".experts.*.w1.weight", ".experts.*.w3.weight" -> ".experts.gate_up_proj": [N, 2I, H]);
// parts without '*' are siblings concatenated along dim 0 (q/k/v conv1d -> conv1d).
struct LayoutMerge {
  std::vector<std::string_view> parts;  // name tails with '*' for the index
  std::string_view target;              // the tail that replaces them
};
// One fused tensor split along dim 0 into equal parts (transformers' Chunk(dim=0)): a
// tensor named ...`source` becomes one buffer per target, ...`targets[i]`, each a dim-0 slice
// of it (schema 2): a contiguous run of its bytes, read straight into place.
struct LayoutSplit {
  std::string_view source;                // the name's tail
  std::vector<std::string_view> targets;  // the tails that replace it, in chunk order
};
struct LayoutRename {
  // A substring of the name, replaced everywhere it occurs; "^x": x at the start only;
  // "x$": at the end only.
  std::string_view from, to;
};
// One of transformers' conversion patterns, with the model types that use it.
struct LayoutConversion {
  std::string_view pattern;  // transformers' name for it: "mixtral", "qwen2_moe", ...
  std::vector<std::string_view> model_types;
  std::vector<LayoutRename> renames;
  std::vector<LayoutMerge> merges;
  std::vector<LayoutSplit> splits;
};

// The table (layouts.cc), and the conversion of `model_type` (nullptr: names as stored).
const std::vector<LayoutConversion>& LayoutConversions();
const LayoutConversion* ConversionOf(std::string_view model_type);

struct LayoutOutcome {
  std::set<std::string> claimed;     // tensors bound into stacks
  std::vector<std::string> targets;  // the stacked buffers' names
  size_t stacks = 0, renamed = 0;    // stacked buffers made; other tensors renamed
  size_t splits = 0;                 // buffers made as slices of a fused tensor
  std::vector<std::string> notes;    // what could not be stacked, and why
};
// Adds the stacked buffers of `conversion` (from the tensors not in `taken`) to `b`.
LayoutOutcome AddLayoutStacks(const LayoutConversion& conversion, const TensorTable& t,
                              const std::set<std::string>& taken, verifier::ManifestBuilder& b);
// Adds the slices of `conversion`'s splits (from the tensors not in `taken`) to `b`.
void AddLayoutSplits(const LayoutConversion& conversion, const TensorTable& t,
                     const std::set<std::string>& taken, verifier::ManifestBuilder& b,
                     LayoutOutcome& out);
// Is `name` one of the tensors a merge of `conversion` stacks?
bool MatchesMerge(const LayoutConversion& conversion, std::string_view name);
// `name` with the conversion's renames applied.
std::string TransformersName(const LayoutConversion& conversion, std::string name);

}  // namespace loadplan::importer
