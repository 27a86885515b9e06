// `loadplan import --pipeline N`: one imported manifest split into N pipeline stages, the
// layers dealt to stages so that each holds about the same checkpoint bytes, plus the
// deployment file that `loadplan plan DEPLOY.json` reads (docs/import.md, docs/deploy.md).
//
// The split works on the verified manifest ImportModel made (not inside the importer): every
// buffer goes to the stage of the layer its name numbers (`model.layers.N.*`, `kv_cache.N`),
// `model.embed_tokens.weight` to stage 0, every other model-level buffer (`model.norm.weight`,
// `lm_head.weight`, unrecognised tensors) and MTP layers (numbered past num_hidden_layers) to
// the last stage; a program goes with the buffers it binds. Every boundary is a pair of
// buffers: stage k's exported output `hidden_out` and stage k+1's input `hidden_in`, BF16
// [batch, hidden_size].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "importer/import.h"
#include "verifier/manifest.h"

namespace loadplan::importer {

// Layers [begin, end) (half-open, as every range in loadplan).
struct LayerRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool operator==(const LayerRange&) const = default;
};

// The checkpoint bytes (weights and sources) of a manifest, by where they go.
struct LayerBytes {
  std::vector<uint64_t> layers;  // one per layer 0..layers-1
  uint64_t first = 0;            // stage 0 only: the embeddings
  uint64_t last = 0;             // the last stage only: final norm, head, MTP layers, the rest
};

// `layers` counts the model's layers (num_hidden_layers): buffers numbered at or past it are
// MTP layers, counted in `last`. A tied head (no lm_head.weight) counts the embeddings in
// `first` and `last` both.
LayerBytes CountLayerBytes(const verifier::Manifest& m, int64_t layers);

// `stages` consecutive non-empty ranges covering 0..layers-1 in order, balancing each stage's
// bytes (its layers', plus `first` for stage 0 and `last` for the last): each cut is the layer
// boundary whose running total is nearest to k/N of the whole, so every stage is within one
// layer's bytes of the mean (unless a stage has to take a layer to stay non-empty).
// Precondition: 1 <= stages <= bytes.layers.size().
std::vector<LayerRange> BalanceLayers(const LayerBytes& bytes, int64_t stages);

struct StageSpec {
  LayerRange layers;
  bool first = false;  // holds the embeddings; no hidden_in
  bool last = false;   // holds the head; no hidden_out
  int64_t model_layers = 0;
  int64_t hidden = 0;  // the boundary buffers' width
  std::string name;    // the stage manifest's name
};

// The stage of `full` that `spec` says, verified clean. kInternal if a program binds buffers
// of two stages or the stage does not verify (a loadplan bug).
base::Result<verifier::Manifest> StageManifest(const verifier::Manifest& full,
                                               const StageSpec& spec);

struct PipelineStage {
  verifier::Manifest manifest;  // verified: no errors, no warnings
  std::string text;             // canonical form (verifier/writer.h)
  LayerRange layers;
  uint64_t bytes = 0;  // checkpoint bytes (weights and sources)
};

struct PipelineImport {
  ImportResult full;  // the unsplit import
  std::vector<PipelineStage> stages;
  std::string deployment;  // deploy.json's text; stage k's manifest is "stage-<k>.json"
};

// ImportModel, then the split into `stages` stages (named "<name>-stage-<k>"). kInvalidInput
// when stages < 1 or stages > num_hidden_layers; otherwise as ImportModel.
base::Result<PipelineImport> ImportPipeline(const std::string& dir, int64_t stages,
                                            const ImportOptions& options = {});

// "stage-3.json"
std::string StageFileName(size_t k);

}  // namespace loadplan::importer
