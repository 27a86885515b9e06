// SplitTensorParallel: one tensor-parallel rank's manifest (tensor_parallel.h).
#include "importer/tensor_parallel.h"

#include "importer/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/expr.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::importer {
namespace {

namespace fs = std::filesystem;

// kIntermediate: gpt-oss's fused experts [E, 2I, ...] by their (interleaved) intermediate
// rows, dim 1; kIntermediateBlocks: [E, H, I/32, 16] by the intermediate's blocks, dim 2.
enum class Split { kWhole, kRows, kColumns, kKvHeads, kIntermediate, kIntermediateBlocks };

bool EndsWithAny(std::string_view name, std::initializer_list<std::string_view> tails) {
  for (std::string_view t : tails) {
    if (name.ends_with(t)) return true;
  }
  return false;
}

// How vLLM's Llama-style layers split a tensor, by its name's tail; and gpt-oss's (its sinks
// by head, its fused MXFP4 experts by intermediate, as vllm/model_executor/models/gpt_oss.py
// narrows w13's rows [2 start, 2 end) and w2's intermediate blocks; its down bias whole).
Split SplitOf(std::string_view name) {
  if (EndsWithAny(
          name, {"self_attn.q_proj.weight", "self_attn.q_proj.bias", "mlp.gate_proj.weight",
                 "mlp.up_proj.weight", "embed_tokens.weight", "lm_head.weight", "self_attn.sinks"}))
    return Split::kRows;
  if (EndsWithAny(name, {"self_attn.k_proj.weight", "self_attn.k_proj.bias",
                         "self_attn.v_proj.weight", "self_attn.v_proj.bias"}))
    return Split::kKvHeads;
  if (EndsWithAny(name, {"self_attn.o_proj.weight", "mlp.down_proj.weight"}))
    return Split::kColumns;
  if (EndsWithAny(name, {"mlp.experts.gate_up_proj_blocks", "mlp.experts.gate_up_proj_scales",
                         "mlp.experts.gate_up_proj_bias"}))
    return Split::kIntermediate;
  if (EndsWithAny(name, {"mlp.experts.down_proj_blocks", "mlp.experts.down_proj_scales"}))
    return Split::kIntermediateBlocks;
  return Split::kWhole;
}

// The dimension a split cuts.
size_t DimOf(Split s) {
  switch (s) {
    case Split::kColumns:
    case Split::kIntermediate: return 1;
    case Split::kIntermediateBlocks: return 2;
    default: return 0;
  }
}

std::optional<uint64_t> Dim(const verifier::Buffer& b, size_t d) {
  if (d >= b.shape.size() || !verifier::IsVariableFree(b.shape[d])) return std::nullopt;
  const std::optional<int64_t> v = verifier::ValueAt(b.shape[d], {});
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

// gpt-oss's MXFP4 intermediate, as vLLM and SGLang narrow it (gpt_oss.py, _load_weights_mxfp4):
// ceil(blocks / T) 32-wide blocks a rank, the last rank the rest, so 90 blocks split 8 ways as
// 7 x 12 + 6. `unit` is a block's extent along the dimension (64 interleaved gate/up rows, or
// 1 down block); kInvalidInput when the rank is left no block.
base::Result<verifier::TensorSlice> IntermediatePart(const verifier::Buffer& b, size_t dim,
                                                     uint64_t extent, uint64_t unit, uint64_t t,
                                                     uint64_t r) {
  if (extent % unit != 0) {
    return base::Status::Error(fmt::format(
        "{}: dimension {} ({}) is not whole 32-wide MXFP4 blocks", b.name, dim, extent));
  }
  const uint64_t blocks = extent / unit, per = (blocks + t - 1) / t;
  const uint64_t start = std::min(r * per, blocks), end = std::min((r + 1) * per, blocks);
  if (start >= end) {
    return base::Status::Error(fmt::format(
        "{}: {} intermediate blocks leave rank {} of --tensor-parallel {} none ({} a rank, as "
        "vLLM deals them)",
        b.name, blocks, r, t, per));
  }
  return verifier::TensorSlice{.dim = dim, .start = start * unit, .length = (end - start) * unit};
}

// [start, +length) of `extent` for this rank: the T-th part, or the KV head it serves.
base::Result<verifier::TensorSlice> PartOf(const verifier::Buffer& b, Split s, size_t dim,
                                           const HfConfig& c, int64_t tp, int64_t rank) {
  const std::optional<uint64_t> extent = Dim(b, dim);
  if (!extent) {
    return base::Status::Error(fmt::format("{}: dimension {} is not a fixed number", b.name, dim));
  }
  const uint64_t t = static_cast<uint64_t>(tp), r = static_cast<uint64_t>(rank);
  if (s == Split::kIntermediate) return IntermediatePart(b, dim, *extent, 64, t, r);
  if (s == Split::kIntermediateBlocks) return IntermediatePart(b, dim, *extent, 1, t, r);
  if (s == Split::kKvHeads && c.kv_heads > 0 && c.kv_heads < tp) {
    if (tp % c.kv_heads != 0 || *extent % static_cast<uint64_t>(c.kv_heads) != 0) {
      return base::Status::Error(fmt::format(
          "{}: {} KV heads do not replicate evenly over {} ranks", b.name, c.kv_heads, tp));
    }
    const uint64_t head = *extent / static_cast<uint64_t>(c.kv_heads);
    const uint64_t served = r * static_cast<uint64_t>(c.kv_heads) / t;
    return verifier::TensorSlice{.dim = dim, .start = served * head, .length = head};
  }
  if (*extent % t != 0) {
    return base::Status::Error(fmt::format(
        "{}: dimension {} ({}) does not divide by --tensor-parallel {}", b.name, dim, *extent, tp));
  }
  return verifier::TensorSlice{.dim = dim, .start = r * (*extent / t), .length = *extent / t};
}

// N of a per-expert tensor's ".experts.N." (Qwen-MoE, Mixtral, DeepSeek checkpoints).
std::optional<int64_t> ExpertIndex(std::string_view name) {
  const size_t at = name.find(".experts.");
  if (at == std::string_view::npos) return std::nullopt;
  int64_t n = 0;
  size_t i = at + 9, digits = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i, ++digits)
    n = n * 10 + (name[i] - '0');
  if (digits == 0 || digits > 9 || i >= name.size() || name[i] != '.') return std::nullopt;
  return n;
}

// Experts dealt over `ranks` ranks in contiguous blocks: the one that holds `expert`.
base::Result<int64_t> OwnerOf(int64_t expert, int64_t experts, int64_t ranks) {
  if (experts % ranks != 0) {
    return base::Status::Error(
        fmt::format("{} experts do not deal evenly over {} expert-parallel ranks", experts, ranks));
  }
  return expert / (experts / ranks);
}

uint64_t BufferBytes(const verifier::Buffer& b) {
  uint64_t elements = 1;
  for (size_t d = 0; d < b.shape.size(); ++d) elements *= Dim(b, d).value_or(0);
  return elements * base::DtypeBits(b.dtype) / 8;
}

// A KV-cache state [batch, ctx, 2, kv_heads, head_dim] holds this rank's KV heads.
void SplitCache(verifier::Buffer& b, const HfConfig& c, int64_t tp) {
  if (b.shape.size() != 5 || Dim(b, 3) != static_cast<uint64_t>(c.kv_heads)) return;
  b.shape[3] = verifier::Expr::Const(c.kv_heads >= tp ? c.kv_heads / tp : 1);
}

// Expert parallel: the rank keeps its own experts, whole (vLLM's --enable-expert-parallel), and
// drops the others' (the buffers stay in name order).
base::Status KeepOwnExperts(int64_t experts, int64_t ranks, int64_t rank, TensorParallelRank& out) {
  std::vector<verifier::Buffer> kept;
  for (verifier::Buffer& b : out.manifest.buffers) {
    const std::optional<int64_t> e = ExpertIndex(b.name);
    if (e) {
      const base::Result<int64_t> owner = OwnerOf(*e, experts, ranks);
      if (!owner.ok()) return owner.status();
      if (*owner != rank) continue;
      out.bytes_read += BufferBytes(b);
      out.experts.push_back(*e);
    }
    kept.push_back(std::move(b));
  }
  out.manifest.buffers = std::move(kept);
  return base::Status::Ok();
}

// Binds `b` (a checkpoint tensor's buffer) to tensor-parallel rank t's part, or whole (then
// listed as replicated), counting the bytes it reads.
base::Status SplitBuffer(verifier::Buffer& b, const HfConfig& c, int64_t tp, int64_t t,
                         TensorParallelRank& out) {
  // By the buffer's name (renamed layouts keep the engine's names), a recipe's source by the
  // tensor it reads (gpt-oss's "...experts.fc1_w.raw" reads "...gate_up_proj_blocks").
  Split s = tp == 1 || ExpertIndex(b.name) ? Split::kWhole : SplitOf(b.name);
  if (s == Split::kWhole && tp > 1 && b.kind == verifier::BufferKind::kSource)
    s = SplitOf(*b.tensor);
  if (s == Split::kWhole) {
    out.replicated.push_back(b.name);
  } else {
    const size_t dim = DimOf(s);
    base::Result<verifier::TensorSlice> part = PartOf(b, s, dim, c, tp, t);
    if (!part.ok()) return part.status();
    part->extent = Dim(b, dim);  // the whole tensor's, before the buffer takes the slice's
    b.shape[dim] = verifier::Expr::Const(static_cast<int64_t>(part->length));
    b.slice = *part;
  }
  out.bytes_read += BufferBytes(b);
  return base::Status::Ok();
}

}  // namespace

verifier::LoadOptions RankLoad(const verifier::LoadOptions& model, int64_t tp, bool derives) {
  verifier::LoadOptions out = model;
  out.lanes = std::max(model.lanes, kRankLanes);
  if (derives) {  // saturating at the CLI's --prefetch limit
    const uint64_t ahead = uint64_t{model.prefetch} * static_cast<uint64_t>(tp);
    out.prefetch = static_cast<uint32_t>(std::min<uint64_t>(ahead, INT32_MAX));
  }
  return out;
}

base::Result<TensorParallelRank> SplitTensorParallel(const verifier::Manifest& full,
                                                     const HfConfig& c, int64_t tp, int64_t rank,
                                                     int64_t ep) {
  if (tp < 1 || ep < 1 || rank < 0 || rank >= tp * ep) {
    return base::Status::Error(
        fmt::format("rank {} of --tensor-parallel {} x --expert-parallel {}", rank, tp, ep),
        base::ErrorKind::kOption);
  }
  int64_t experts = 0;  // per-expert tensors: the highest index + 1
  for (const verifier::Buffer& b : full.buffers) {
    if (const std::optional<int64_t> e = ExpertIndex(b.name)) experts = std::max(experts, *e + 1);
  }
  const int64_t t = rank % tp;  // the attention's (and dense MLP's) tensor-parallel rank
  if (ep > 1 && experts == 0) {
    return base::Status::Error(fmt::format(
        "--expert-parallel {}: {} has no per-expert tensors (.experts.N.) to deal over ranks; "
        "fused experts (gpt-oss's) split with --tensor-parallel",
        ep, full.name));
  }
  TensorParallelRank out{.manifest = full};
  out.manifest.name = ep > 1 ? fmt::format("{}-tp{}-ep{}-rank{}", full.name, tp, ep, rank)
                             : fmt::format("{}-tp{}-rank{}", full.name, tp, rank);
  if (ep > 1) {
    if (base::Status st = KeepOwnExperts(experts, tp * ep, rank, out); !st.ok()) return st;
  }
  for (verifier::Buffer& b : out.manifest.buffers) {
    if (b.kind == verifier::BufferKind::kState) SplitCache(b, c, tp);
    if (ep > 1 && ExpertIndex(b.name)) continue;  // counted above
    if (!b.tensor || b.slice) {
      if (b.tensors) out.bytes_read += BufferBytes(b);
      continue;
    }
    if (base::Status st = SplitBuffer(b, c, tp, t, out); !st.ok()) return st;
  }
  if (base::Status st = SplitMxfp4Calls(out.manifest); !st.ok()) return st;
  if (tp > 1) out.manifest.schema = 2;
  if (tp * ep > 1) out.manifest.load = RankLoad(full.load, tp, !full.programs.empty());
  std::sort(out.experts.begin(), out.experts.end());
  out.experts.erase(std::unique(out.experts.begin(), out.experts.end()), out.experts.end());
  return out;
}

std::string RankFileName(size_t rank) { return fmt::format("rank-{}.json", rank); }

namespace {

// Rank `r` of `m`, verified, appended to `out` with its file name in `stages`.
base::Status AddRank(const verifier::Manifest& m, const HfConfig& c, int64_t tp, int64_t r,
                     int64_t ep, const std::string& file, TensorParallelImport& out,
                     nlohmann::json& stages) {
  base::Result<TensorParallelRank> rank = SplitTensorParallel(m, c, tp, r, ep);
  if (!rank.ok()) return rank.status();
  const verifier::VerifyResult v = verifier::Verify(rank->manifest);
  if (!v.ok()) {
    return base::Status::Error(
        fmt::format("{} does not verify: {}", file,
                    v.diags.empty() ? "" : v.diags.front().code + " " + v.diags.front().message),
        base::ErrorKind::kInternal);
  }
  out.texts.push_back(verifier::WriteManifest(rank->manifest));
  out.ranks.push_back(std::move(*rank));
  stages.push_back({{"manifest", file}});
  return base::Status::Ok();
}

std::string DeploymentText(const std::string& name, int64_t tp, const nlohmann::json& stages) {
  return nlohmann::json{{"deployment", name}, {"tensor_parallel", tp}, {"stages", stages}}.dump(2) +
         "\n";
}

}  // namespace

base::Result<TensorParallelImport> ImportTensorParallel(const std::string& dir, int64_t tp,
                                                        const ImportOptions& options, int64_t ep) {
  if (tp < 1 || tp > 4096 || ep < 1 || ep > 4096 || tp * ep > 4096) {
    return base::Status::Error(
        fmt::format("--tensor-parallel {} x --expert-parallel {} is not 1 to 4096 ranks", tp, ep),
        base::ErrorKind::kOption);
  }
  base::Result<ImportResult> full = ImportModel(dir, options);
  if (!full.ok()) return full.status();
  base::Result<HfConfig> c = ReadHfConfig((fs::path(dir) / "config.json").string(), options.strict);
  if (!c.ok()) return c.status();
  TensorParallelImport out{.full = std::move(*full)};
  nlohmann::json stages = nlohmann::json::array();
  for (int64_t r = 0; r < tp * ep; ++r) {
    const std::string file = RankFileName(static_cast<size_t>(r));
    if (base::Status st = AddRank(out.full.manifest, *c, tp, r, ep, file, out, stages); !st.ok())
      return st;
  }
  out.deployment =
      DeploymentText(ep > 1 ? fmt::format("{}-tp{}-ep{}", out.full.manifest.name, tp, ep)
                            : fmt::format("{}-tp{}", out.full.manifest.name, tp),
                     tp * ep, stages);
  return out;
}

std::string GridFileName(size_t stage, size_t rank) {
  return fmt::format("stage-{}-rank-{}.json", stage, rank);
}

base::Result<TensorParallelImport> ImportPipelineTensorParallel(const std::string& dir,
                                                                int64_t pipeline, int64_t tp,
                                                                const ImportOptions& options) {
  if (tp < 1 || pipeline < 1 || tp * pipeline > 4096) {
    return base::Status::Error(
        fmt::format("--pipeline {} x --tensor-parallel {} is not 1 to 4096 ranks", pipeline, tp),
        base::ErrorKind::kOption);
  }
  base::Result<PipelineImport> pipe = ImportPipeline(dir, pipeline, options);
  if (!pipe.ok()) return pipe.status();
  base::Result<HfConfig> c = ReadHfConfig((fs::path(dir) / "config.json").string(), options.strict);
  if (!c.ok()) return c.status();
  TensorParallelImport out{.full = std::move(pipe->full)};
  nlohmann::json stages = nlohmann::json::array();
  for (size_t p = 0; p < pipe->stages.size(); ++p) {
    for (int64_t t = 0; t < tp; ++t) {
      const std::string file = GridFileName(p, static_cast<size_t>(t));
      if (base::Status st = AddRank(pipe->stages[p].manifest, *c, tp, t, 1, file, out, stages);
          !st.ok())
        return st;
    }
  }
  out.deployment =
      DeploymentText(fmt::format("{}-pp{}-tp{}", out.full.manifest.name, pipeline, tp), tp, stages);
  return out;
}

}  // namespace loadplan::importer
