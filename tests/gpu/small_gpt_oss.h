// The GPU tests' model: a small gpt-oss-shaped manifest (2 layers, 4 experts, padded dims,
// 2 lanes) and a synthetic checkpoint of it in `dir`.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/synthetic.h"
#include "examples/examples.h"
#include "verifier/verify.h"

namespace loadplan::backend {

struct Model {
  verifier::Manifest manifest;
  std::optional<verifier::VerifiedManifest> verified;
  std::string dir;
  std::unique_ptr<Checkpoint> checkpoint;
  std::string error;
};

inline Model MakeModel(const std::string& dir) {
  Model m;
  verifier::BuildResult built = examples::GptOss({.name = "gpt-oss-gpu-test",
                                                  .layers = 2,
                                                  .experts = 4,
                                                  .top_k = 2,
                                                  .hidden = 224,
                                                  .intermediate = 160,
                                                  .heads = 4,
                                                  .kv_heads = 2,
                                                  .head_dim = 32,
                                                  .vocab = 1000,
                                                  .sliding_window = 16,
                                                  .batch_max = 8,
                                                  .ctx_max = 64,
                                                  .lanes = 2,
                                                  .prefetch = 1});
  if (!built.ok()) return {.error = built.errors.front()};
  verifier::VerifyResult v = verifier::Verify(built.manifest);
  if (!v.verified) return {.error = "the small gpt-oss manifest does not verify"};
  m.verified = std::move(v.verified);
  m.manifest = std::move(built.manifest);
  m.dir = dir;
  const base::Result<GenSummary> g =
      GenerateCheckpoint(m.manifest, {.dir = dir, .seed = 7, .shard_bytes = uint64_t{1} << 20});
  if (!g.ok()) return {.error = g.status().message()};
  base::Result<std::unique_ptr<Checkpoint>> opened = Checkpoint::Open(dir);
  if (!opened.ok()) return {.error = opened.status().message()};
  m.checkpoint = std::move(*opened);
  return m;
}

}  // namespace loadplan::backend
