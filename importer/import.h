// `loadplan import`: a Hugging Face model folder (config.json, model.safetensors.index.json and
// its shards, or one model.safetensors) -> a manifest that verifies clean. Reads the config and
// the safetensors headers only, never the tensor data. docs/import.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "importer/recipes.h"
#include "verifier/manifest.h"

namespace loadplan::importer {

// How the weights are named and shaped: as the checkpoint stores them, or as transformers'
// model classes hold them after their load-time conversions (importer/layouts.h).
enum class Layout : uint8_t { kCheckpoint, kTransformers };
std::optional<Layout> ParseLayout(std::string_view name);  // "checkpoint", "transformers"
std::string_view LayoutName(Layout l);

struct ImportOptions {
  Recipe recipe = Recipe::kAuto;
  base::Dtype kv_dtype = base::Dtype::kBF16;
  std::optional<int64_t> max_batch;  // default 256 (vLLM's max_num_seqs)
  std::optional<int64_t> max_ctx;    // default: max_position_embeddings
  std::string name;                  // default: the folder's name
  // A config the tensors contradict, an unknown model_type, a missing config.json or key:
  // errors when strict; else warnings and notes, and the tensors are bound as stored.
  bool strict = false;
  Layout layout = Layout::kCheckpoint;
  // The cache as one buffer of this many bytes per token of context, whatever the config says
  // (for geometries import cannot tell).
  std::optional<int64_t> kv_bytes_per_token;
};

struct ImportResult {
  verifier::Manifest manifest;  // verified: no errors, no warnings
  std::string text;             // the manifest in canonical form (verifier/writer.h)
  std::string model_type;
  Recipe recipe = Recipe::kNone;  // the one applied (kAuto resolved)
  Layout layout = Layout::kCheckpoint;
  size_t tensors = 0, shards = 0, weights = 0, sources = 0, carries = 0, kv_layers = 0;
  size_t state_layers = 0;  // layers with a recurrent state (linear attention, SSM)
  size_t stacks = 0;        // buffers that stack several tensors (--layout transformers)
  int64_t kv_bytes_per_token = 0;
  int64_t state_bytes_per_sequence = 0;
  int64_t layers = 0, hidden = 0;     // the config's num_hidden_layers and hidden_size
  std::vector<std::string> notes;     // what was assumed, absent, tied, unrecognised
  std::vector<std::string> warnings;  // where the tensors contradict the config (not --strict)
  // Wall time of each step, milliseconds (bench/import_time.cc reports them).
  struct Times {
    double config = 0, headers = 0, build = 0, verify = 0;
    double check = 0;  // beside the recipe and the builder calls (build)
    double write = 0;  // the text, written while verify runs
  } ms;
};

// kIo when the folder or a file in it cannot be read; kInvalidInput for a broken index or
// shard, a bad option, or a recipe that does not apply (each message names the file and
// tensor), and under `strict` for an unknown model_type or a config the tensors disagree with;
// kInternal if the manifest made does not verify.
base::Result<ImportResult> ImportModel(const std::string& dir, const ImportOptions& options = {});

}  // namespace loadplan::importer
