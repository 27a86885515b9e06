// The example manifests, each built by a function with the builder
// (verifier/builder.h), and the generator that writes them as examples/<name>.json.
// examples/README.md documents every parameter and how to regenerate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verifier/builder.h"

namespace loadplan::examples {

// gpt-oss-120b (the HF checkpoint's tensor names and shapes). Smaller `layers`
// gives N-layer versions with the same per-layer structure.
struct GptOssParams {
  std::string name = "gpt-oss-120b";
  int layers = 36;
  int64_t experts = 128;
  int64_t top_k = 4;
  int64_t hidden = 2880;
  int64_t intermediate = 2880;
  int64_t heads = 64;
  int64_t kv_heads = 8;
  int64_t head_dim = 64;
  int64_t vocab = 201088;
  int64_t sliding_window = 128;  // even layers; odd layers attend to the whole context
  int64_t batch_max = 256;
  int64_t ctx_max = 131072;
  uint32_t lanes = 4;
  uint32_t prefetch = 1;
};
verifier::BuildResult GptOss(const GptOssParams& p = {});

// One pipeline stage of a K3-class MoE model: MXFP4 experts (gpt-oss layout) of
// `layers` consecutive layers on one device. Defaults: 21 layers x 384 experts of
// H=7168, I=2048: 188.85 GB (10^9) of expert tensors, one PP8 stage of 168 layers.
struct K3StageParams {
  std::string name = "k3-stage";
  int first_layer = 0;
  int layers = 21;
  int64_t experts = 384;
  int64_t top_k = 8;
  int64_t hidden = 7168;
  int64_t intermediate = 2048;
  int64_t batch_max = 256;
  uint32_t lanes = 4;
  uint32_t prefetch = 1;
};
verifier::BuildResult K3Stage(const K3StageParams& p = {});

// A manifest that fits on one screen: every kind of the staged-load story once.
verifier::BuildResult Tiny();

// The committed examples, by file stem: "gpt-oss-120b", "k3-stage", "tiny".
std::vector<std::string> ExampleNames();
// Builds one example by stem (errors: unknown name or a build error).
verifier::BuildResult BuildExample(std::string_view name);
// Whether the example takes a layer count (gpt-oss-120b and k3-stage; tiny does not).
[[nodiscard]] bool ExampleHasLayers(std::string_view name);
// With `layers`: the N-layer version named "<name>-<N>l" (an error for an example without
// layers); without: BuildExample(name).
verifier::BuildResult BuildExample(std::string_view name, std::optional<int> layers);
// The canonical JSON text (WriteManifest) of one example; empty on error.
std::string ExampleText(std::string_view name);

// Writes <dir>/<name>.json for every example. Returns 0 on success, 1 when an
// example fails to build or a file cannot be written (reason on stderr).
int RegenerateExamples(const std::string& dir);

}  // namespace loadplan::examples
