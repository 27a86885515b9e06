// The architectures `loadplan import` knows, and the tensor shapes each one's config.json
// implies (as the published checkpoints name them: per-expert tensors, FP8 scales beside their
// weights, gpt-oss's MXFP4 blocks). The check that a folder's tensors agree with its config.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "importer/hf_config.h"
#include "importer/tensors.h"

namespace loadplan::importer {

// One tensor the config implies: `key` is the full name for model-level tensors, the part after
// "model.layers.N." for layer tensors, with "experts.*." standing for every expert index.
struct Expect {
  std::string key;
  std::vector<int64_t> shape;
  std::string
      why;  // the config fields the shape comes from: "num_key_value_heads*head_dim, hidden"
  bool optional = false;
};
std::vector<Expect> ModelExpects(const HfConfig& c);
std::vector<Expect> LayerExpects(const HfConfig& c, int64_t layer);  // layers + mtp_layers of them

// The F32 block scales `X.weight_scale_inv` of an FP8 weight [rows, cols]: [ceil(rows /
// block_rows), ceil(cols / block_cols)] at the config's weight_block_size.
std::vector<int64_t> BlockScaleShape(const std::vector<int64_t>& weight, const HfConfig& c);

struct ConfigCheck {
  std::vector<std::string>
      unrecognised;           // tensors no Expect covers (bound as weights all the same)
  bool lm_head_tied = false;  // no lm_head.weight: the embedding serves as the head
  bool mtp_absent = false;    // the config's MTP layers are not in the checkpoint
  // Every disagreement, one per entry, each naming the tensor and its shard: the first 1000;
  // `unlisted` more were counted (up to a million, then `counting_stopped`).
  std::vector<std::string> problems;
  size_t unlisted = 0;
  bool counting_stopped = false;
};
// Every tensor against its Expect (shape; an FP8 `*.weight_scale_inv` against its weight's
// blocks), every required Expect present, layer and expert indices within the config's counts.
// A family import does not know by name (or an incomplete config) is checked only for the
// model-level tensors' shapes, where they are present. MTP layers the checkpoint does not hold
// at all are absent (transformers does not save them), not missing.
ConfigCheck CheckAgainstConfig(const HfConfig& c, const TensorTable& t);
// The problems as one kInvalidInput status (up to 20 lines, then a count).
base::Status ProblemsStatus(const HfConfig& c, const ConfigCheck& check);
// "... and 12 more problems not listed" ("at least" when counting stopped); "" when none.
std::string UnlistedText(const ConfigCheck& check);

}  // namespace loadplan::importer
