// `loadplan import`.
#include "cli/cmd_import.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "base/bytes.h"
#include "base/seconds.h"
#include "cli/pipeline.h"
#include "importer/import.h"
#include "importer/pipeline.h"
#include "importer/tensor_parallel.h"

namespace loadplan::cli {
namespace {

int Fail(const base::Status& st) {
  std::fprintf(stderr, "loadplan import: %s\n", st.message().c_str());
  switch (st.kind()) {
    case base::ErrorKind::kIo: return 2;
    case base::ErrorKind::kOption: return 2;
    case base::ErrorKind::kInternal: return 4;
    default: return 1;
  }
}

void PrintSummary(const importer::ImportResult& r, const std::string& out, double seconds) {
  std::fprintf(stderr,
               "%s (%s): %zu tensors in %zu shard%s -> %zu weights, %zu sources -> %zu carries "
               "(recipe %s, layout %s), %zu KV-cache layers (%lld bytes per token of context)%s; "
               "%.3f s\n",
               r.manifest.name.c_str(),
               r.model_type.empty() ? "unknown type" : r.model_type.c_str(), r.tensors, r.shards,
               r.shards == 1 ? "" : "s", r.weights, r.sources, r.carries,
               std::string(importer::RecipeName(r.recipe)).c_str(),
               std::string(importer::LayoutName(r.layout)).c_str(), r.kv_layers,
               static_cast<long long>(r.kv_bytes_per_token),
               r.state_layers == 0 ? ""
                                   : fmt::format(", {} state layers ({} bytes per sequence)",
                                                 r.state_layers, r.state_bytes_per_sequence)
                                         .c_str(),
               seconds);
  for (const std::string& n : r.notes) std::fprintf(stderr, "  note: %s\n", n.c_str());
  for (const std::string& w : r.warnings) std::fprintf(stderr, "  warning: %s\n", w.c_str());
  if (!out.empty()) std::fprintf(stderr, "wrote %s\n", out.c_str());
}

// --pipeline N: the stages and deploy.json into the folder o.out (made if need be).
int RunPipeline(const ImportCliOptions& o, const importer::ImportOptions& options,
                std::chrono::steady_clock::time_point t0) {
  if (o.out.empty() || o.out == "-") {
    std::fprintf(stderr, "loadplan import: --pipeline needs -o DIR (the stages' folder)\n");
    return 2;
  }
  base::Result<importer::PipelineImport> r = importer::ImportPipeline(o.dir, *o.pipeline, options);
  if (!r.ok()) return Fail(r.status());
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  const std::filesystem::path dir(o.out);
  const auto write = [](const std::string& path, const std::string& text) {
    const base::Status st = WriteOutput(path, text);
    if (!st.ok()) std::fprintf(stderr, "loadplan import: %s\n", st.message().c_str());
    return st.ok();
  };
  for (size_t k = 0; k < r->stages.size(); ++k) {
    if (!write((dir / importer::StageFileName(k)).string(), r->stages[k].text)) return 2;
  }
  const std::string deploy = (dir / "deploy.json").string();
  if (!write(deploy, r->deployment)) return 2;
  const double s = base::SecondsSince(t0);
  PrintSummary(r->full, "", s);
  for (size_t k = 0; k < r->stages.size(); ++k) {
    const importer::PipelineStage& st = r->stages[k];
    std::fprintf(stderr, "  stage %zu: layers %lld..%lld, %s of checkpoint -> %s\n", k,
                 static_cast<long long>(st.layers.begin), static_cast<long long>(st.layers.end - 1),
                 base::FormatBytesAuto(st.bytes).c_str(),
                 (dir / importer::StageFileName(k)).string().c_str());
  }
  std::fprintf(stderr, "wrote %s (loadplan plan %s)\n", deploy.c_str(), deploy.c_str());
  return 0;
}

// The ranks' manifests (rank k as file(k)) and deploy.json into `dir` (made if need be): 0, or
// exit 2 naming what could not be written.
int WriteRanks(const importer::TensorParallelImport& r, const std::filesystem::path& dir,
               const std::function<std::string(size_t)>& file) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (size_t k = 0; k < r.texts.size(); ++k) {
    if (base::Status st = WriteOutput((dir / file(k)).string(), r.texts[k]); !st.ok()) {
      std::fprintf(stderr, "loadplan import: %s\n", st.message().c_str());
      return 2;
    }
  }
  if (base::Status st = WriteOutput((dir / "deploy.json").string(), r.deployment); !st.ok()) {
    std::fprintf(stderr, "loadplan import: %s\n", st.message().c_str());
    return 2;
  }
  return 0;
}

// --tensor-parallel T: the ranks and deploy.json into the folder o.out (made if need be).
int RunTensorParallel(const ImportCliOptions& o, const importer::ImportOptions& options,
                      std::chrono::steady_clock::time_point t0) {
  if (o.out.empty() || o.out == "-") {
    std::fprintf(stderr,
                 "loadplan import: --tensor-parallel / --expert-parallel need -o DIR (the ranks' "
                 "folder)\n");
    return 2;
  }
  if (o.pipeline && o.expert_parallel) {
    std::fprintf(stderr,
                 "loadplan import: --expert-parallel with --pipeline is not supported "
                 "(pipeline stages of tensor-parallel ranks are: --pipeline P "
                 "--tensor-parallel T)\n");
    return 2;
  }
  base::Result<importer::TensorParallelImport> r =
      o.pipeline ? importer::ImportPipelineTensorParallel(o.dir, *o.pipeline,
                                                          o.tensor_parallel.value_or(1), options)
                 : importer::ImportTensorParallel(o.dir, o.tensor_parallel.value_or(1), options,
                                                  o.expert_parallel.value_or(1));
  if (!r.ok()) return Fail(r.status());
  const auto file = [&](size_t k) {  // rank k's manifest file
    const auto t = static_cast<size_t>(o.tensor_parallel.value_or(1));
    return o.pipeline ? importer::GridFileName(k / t, k % t) : importer::RankFileName(k);
  };
  const std::filesystem::path dir(o.out);
  if (const int rc = WriteRanks(*r, dir, file); rc != 0) return rc;
  const std::string deploy = (dir / "deploy.json").string();
  const double s = base::SecondsSince(t0);
  PrintSummary(r->full, "", s);
  for (size_t k = 0; k < r->ranks.size(); ++k) {
    const importer::TensorParallelRank& rk = r->ranks[k];
    std::fprintf(
        stderr, "  rank %zu: reads %s, %zu tensors replicated%s -> %s\n", k,
        base::FormatBytesAuto(rk.bytes_read).c_str(), rk.replicated.size(),
        rk.experts.empty()
            ? ""
            : fmt::format(", experts {}..{}", rk.experts.front(), rk.experts.back()).c_str(),
        (dir / file(k)).string().c_str());
  }
  std::fprintf(stderr, "wrote %s (loadplan plan %s)\n", deploy.c_str(), deploy.c_str());
  return 0;
}

}  // namespace

int RunImport(const ImportCliOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  importer::ImportOptions options{.max_batch = o.max_batch,
                                  .max_ctx = o.max_ctx,
                                  .name = o.name,
                                  .strict = o.strict,
                                  .kv_bytes_per_token = o.kv_bytes_per_token};
  const std::optional<importer::Recipe> recipe = importer::ParseRecipe(o.recipe);
  const std::optional<base::Dtype> kv = base::ParseDtype(o.kv_dtype);
  const std::optional<importer::Layout> layout = importer::ParseLayout(o.layout);
  if (!recipe || !kv || !layout) {  // main.cc's choices keep these out; a library caller may not
    std::fprintf(stderr, "loadplan import: unknown %s\n",
                 !recipe ? ("--recipe '" + o.recipe + "'").c_str()
                 : !kv   ? ("--kv-dtype '" + o.kv_dtype + "'").c_str()
                         : ("--layout '" + o.layout + "'").c_str());
    return 2;
  }
  options.recipe = *recipe;
  options.kv_dtype = *kv;
  options.layout = *layout;
  if (o.tensor_parallel || o.expert_parallel) return RunTensorParallel(o, options, t0);
  if (o.pipeline) return RunPipeline(o, options, t0);
  base::Result<importer::ImportResult> r = importer::ImportModel(o.dir, options);
  if (!r.ok()) return Fail(r.status());
  if (base::Status st = WriteOutput(o.out.empty() ? "-" : o.out, r->text); !st.ok()) {
    std::fprintf(stderr, "loadplan import: %s\n", st.message().c_str());
    return 2;
  }
  const double s = base::SecondsSince(t0);
  PrintSummary(*r, o.out, s);
  return 0;
}

}  // namespace loadplan::cli
