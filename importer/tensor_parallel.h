// `import --tensor-parallel T`: the manifest of one tensor-parallel rank, made from the full
// import, each weight bound to the part of its tensor the rank reads (a `slice`, schema 2) as
// vLLM splits Llama-style models (docs/deploy.md, "Tensor parallel"):
//   - by output rows (dim 0): q/k/v projections (weights and biases), gate and up projections,
//     the embeddings and lm_head (vocabulary rows);
//   - by input columns (dim 1): o_proj and down_proj;
//   - K and V by KV head: kv_heads / T heads a rank when T divides kv_heads; when kv_heads < T
//     each rank holds the one KV head it serves (head r * kv_heads / T), replicated across the
//     T / kv_heads ranks that share it;
//   - everything else (norms, routers, per-expert tensors of MoE layers that are not split
//     here) bound whole, on every rank: the replicated tensors.
// The KV cache of a rank holds its KV heads. A shape that does not divide by T is an error
// naming the tensor. Derive programs: gpt-oss's expert prep (recipe mxfp4-gpt-oss) is split
// with its sources, each rank preparing its own intermediate (SplitMxfp4Calls); a manifest with
// any other derive call is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "importer/hf_config.h"
#include "importer/import.h"
#include "verifier/manifest.h"

namespace loadplan::importer {

struct TensorParallelRank {
  verifier::Manifest manifest;          // the rank's manifest (verify it before use)
  std::vector<std::string> replicated;  // weights bound whole (on every rank)
  uint64_t bytes_read = 0;              // checkpoint bytes the rank's weights bind
  std::vector<int64_t> experts;         // with expert parallel: the experts it holds
};

// The load lanes a rank manifest gets at least. A lane queues each fill's copies after the
// previous fill's, and a rank's column slices, read by map, hold up the fills behind them: rank
// 0 of gpt-oss-120b's shape at TP=8 (16 layers, recipe none) loaded at 0.51 of pinned H2D on
// one lane, 0.82 on 4, 0.85 on 8, 0.87-0.88 on 16 (H100, docs/deploy.md "Lanes and calls ahead").
// Weights' fills share no memory, and a source's fill waits for the staging arena's last readers on
// any lane count, so the peak does not move.
inline constexpr uint32_t kRankLanes = 16;

// Rank `rank` of the full import `full` of a model with config `c`: of `tp` ranks, or with
// expert parallel `ep` > 1 of tp x ep ranks, where rank r splits attention and dense layers as
// tensor-parallel rank r % tp and holds the r-th contiguous block of the per-expert tensors
// (`.experts.N.`) whole (vLLM's --enable-expert-parallel with data parallel ep: experts dealt
// over all tp x ep ranks, attention tensor-parallel within tp); experts elsewhere are dropped.
// A rank of several loads as RankLoad says.
base::Result<TensorParallelRank> SplitTensorParallel(const verifier::Manifest& full,
                                                     const HfConfig& c, int64_t tp, int64_t rank,
                                                     int64_t ep = 1);

// A rank's load options from its model's: at least kRankLanes lanes, and where the model
// derives, `tp` times its derive calls ahead. A rank's sources are 1/tp of the model's, so the
// bytes staged ahead of the calls stay near the model's (its arena, not more: the 16-layer
// gpt-oss's 1.05 GiB at prefetch 1, a TP=8 rank's 0.42 at 8) where one call ahead left the I/O
// threads waiting for the arena: its rank 0 loaded at 23.88 GB/s on 16 lanes and prefetch 1,
// 41.48 at prefetch 8, for 0.28 GiB more peak (H100, docs/deploy.md "Lanes and calls ahead").
verifier::LoadOptions RankLoad(const verifier::LoadOptions& model, int64_t tp, bool derives);

// `import DIR --tensor-parallel T`: the full import (its options; recipe none, gpt-oss's, or
// one that makes no derive program), then every rank, verified, in canonical text, and the
// deployment file listing them ({"deployment", "tensor_parallel": T, "stages": [rank-0.json, ...]})
// that `loadplan plan` reads. config.json is read for the heads. kInternal when a rank does not
// verify (a loadplan bug).
struct TensorParallelImport {
  ImportResult full;
  std::vector<TensorParallelRank> ranks;
  std::vector<std::string> texts;  // the ranks' manifests, canonical
  std::string deployment;          // deploy.json's text
};
base::Result<TensorParallelImport> ImportTensorParallel(const std::string& dir, int64_t tp,
                                                        const ImportOptions& options,
                                                        int64_t ep = 1);
std::string RankFileName(size_t rank);  // "rank-0.json"

// Resizes the gpt-oss expert prep calls of a rank's manifest whose sources are already sliced
// (its fc1 sources by interleaved gate/up rows, its fc2 sources by intermediate blocks): each
// call's sliced extent and padded intermediate (i_pad, rounded up to 128 as the full import),
// and each carry's padded dim, so the rank prepares its own slice as the recipe prepares a
// whole tensor. The down bias stays whole. kInvalidInput for any other derive kernel.
base::Status SplitMxfp4Calls(verifier::Manifest& m);

// `import DIR --pipeline P --tensor-parallel T`: ImportPipeline's P stages, each split into T
// tensor-parallel ranks (SplitTensorParallel of the stage), P x T manifests in rank order
// (rank p T + t is stage p's tensor-parallel rank t, as vLLM and Megatron number them) and the
// deployment file ({"deployment", "tensor_parallel": T, "stages": [stage-0-rank-0.json, ...]}).
base::Result<TensorParallelImport> ImportPipelineTensorParallel(const std::string& dir,
                                                                int64_t pipeline, int64_t tp,
                                                                const ImportOptions& options);
std::string GridFileName(size_t stage, size_t rank);  // "stage-1-rank-0.json"

}  // namespace loadplan::importer
