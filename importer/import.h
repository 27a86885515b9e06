// `loadplan import`: a Hugging Face model folder (config.json, model.safetensors.index.json and
// its shards, or one model.safetensors) -> a manifest that verifies clean. Reads the config and
// the safetensors headers only, never the tensor data. docs/import.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/status.h"
#include "importer/recipes.h"
#include "verifier/manifest.h"

namespace loadplan::importer {

struct ImportOptions {
  Recipe recipe = Recipe::kAuto;
  base::Dtype kv_dtype = base::Dtype::kBF16;
  std::optional<int64_t> max_batch;  // default 256 (vLLM's max_num_seqs)
  std::optional<int64_t> max_ctx;    // default: max_position_embeddings
  std::string name;                  // default: the folder's name
};

struct ImportResult {
  verifier::Manifest manifest;  // verified: no errors, no warnings
  std::string text;             // the manifest in canonical form (verifier/writer.h)
  std::string model_type;
  Recipe recipe = Recipe::kNone;  // the one applied (kAuto resolved)
  size_t tensors = 0, shards = 0, weights = 0, sources = 0, carries = 0, kv_layers = 0;
  int64_t kv_bytes_per_token = 0;
  int64_t layers = 0, hidden = 0;  // the config's num_hidden_layers and hidden_size
  std::vector<std::string> notes;  // what the recipe could not place, tied heads, unrecognised
  // Wall time of each step, milliseconds (bench/import_time.cc reports them).
  struct Times {
    double config = 0, headers = 0, build = 0, verify = 0;
    double check = 0;  // beside the recipe and the builder calls (build)
    double write = 0;  // the text, written while verify runs
  } ms;
};

// kIo when the folder or a file in it cannot be read; kInvalidInput for an unknown model_type,
// a broken index or shard, a config the tensors disagree with, or a recipe that does not apply
// (each message names the file and tensor); kInternal if the manifest made does not verify.
base::Result<ImportResult> ImportModel(const std::string& dir, const ImportOptions& options = {});

}  // namespace loadplan::importer
