// `loadplan import MODEL_DIR`: a Hugging Face model folder -> a manifest (importer/import.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loadplan::cli {

struct ImportCliOptions {
  std::string dir;
  std::string out;              // empty: stdout; with `pipeline`, the folder (required)
  std::string recipe = "auto";  // importer::RecipeNames()
  std::string kv_dtype = "BF16";
  std::optional<int64_t> max_batch, max_ctx;
  std::string name;
  // --pipeline N: N stage manifests stage-0.json ... and deploy.json into the folder `out`
  // (importer/pipeline.h).
  std::optional<int64_t> pipeline;
  // --tensor-parallel T: T rank manifests rank-0.json ... and deploy.json into `out`
  // (importer/tensor_parallel.h).
  std::optional<int64_t> tensor_parallel;
  std::optional<int64_t> expert_parallel;  // --expert-parallel E: T x E ranks
  std::string layout = "checkpoint";       // importer::ParseLayout
  bool strict = false;
  std::optional<int64_t> kv_bytes_per_token;
};

// Writes the manifest (canonical form) and a summary on stderr (notes and warnings). Exit 0; 1
// when the folder's content is wrong (a broken index or shard, a recipe that does not apply;
// with --strict an unknown model_type or tensors that disagree with config.json); 2 for a bad
// option value, a file that cannot be read, or an output that cannot be written (with --pipeline:
// no -o, or --pipeline outside 1..layers is 2 or 1 respectively); 4 if the manifest made does not
// verify (a bug).
int RunImport(const ImportCliOptions& options);

}  // namespace loadplan::cli
