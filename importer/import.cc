// ImportModel: config + headers -> builder -> verified manifest.
#include "importer/import.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "examples/kernels.h"
#include "importer/families.h"
#include "importer/hf_config.h"
#include "importer/kv_cache.h"
#include "importer/tensors.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::importer {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDefaultMaxBatch = 256;
constexpr size_t kListed = 5;  // unrecognised tensors named in the notes

std::string FolderName(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  const std::string n = p.filename().string();
  return n.empty() || n == "." ? std::string("model") : n;
}

base::Status CheckOptions(const ImportOptions& o) {
  if (o.max_batch && *o.max_batch < 1)
    return base::Status::Error(fmt::format("--max-batch {} is not >= 1", *o.max_batch));
  if (o.max_ctx && *o.max_ctx < 1)
    return base::Status::Error(fmt::format("--max-ctx {} is not >= 1", *o.max_ctx));
  return base::Status::Ok();
}

void NoteUnrecognised(const ConfigCheck& check, ImportResult& r) {
  if (check.lm_head_tied)
    r.notes.push_back("no lm_head.weight: the output head is tied to model.embed_tokens.weight");
  if (check.unrecognised.empty()) return;
  std::vector<std::string> first(
      check.unrecognised.begin(),
      check.unrecognised.begin() + static_cast<long>(std::min(kListed, check.unrecognised.size())));
  r.notes.push_back(fmt::format("{} tensor{} the config does not describe, bound as weights: {}{}",
                                check.unrecognised.size(),
                                check.unrecognised.size() == 1 ? "" : "s", fmt::join(first, ", "),
                                check.unrecognised.size() > kListed ? ", ..." : ""));
}

using Clock = std::chrono::steady_clock;

// "a; b; c; ... and 12 more"
std::string FirstFew(const std::vector<std::string>& v) {
  const std::vector<std::string> first(
      v.begin(), v.begin() + static_cast<long>(std::min<size_t>(kListed, v.size())));
  return fmt::format(
      "{}{}", fmt::join(first, "; "),
      v.size() > kListed ? fmt::format("; ... and {} more", v.size() - kListed) : std::string());
}

// Milliseconds since `t`, and restarts `t`.
double Lap(Clock::time_point& t) {
  const Clock::time_point now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

struct Built {
  verifier::Manifest manifest;
  std::string text;
};

// Build(), then Verify() on this thread while a second one writes the canonical text (both
// only read the manifest; the text is dropped if the manifest does not verify clean).
base::Result<Built> BuildVerified(const verifier::ManifestBuilder& b, ImportResult::Times& ms) {
  Clock::time_point t = Clock::now();
  verifier::BuildResult built = b.Build();
  ms.build += Lap(t);
  if (!built.ok()) {
    return base::Status::Error(
        fmt::format("import built an inconsistent manifest: {}", FirstFew(built.errors)),
        base::ErrorKind::kInternal);
  }
  // Shared with the verifier (the builder's output is in name order, so it verifies this
  // object rather than a sorted copy) and, read-only, with the writer.
  auto shared = std::make_shared<verifier::Manifest>(std::move(built.manifest));
  double write_ms = 0;
  std::future<std::string> text = std::async(std::launch::async, [&] {
    Clock::time_point w = Clock::now();
    std::string out = verifier::WriteManifest(*shared);
    write_ms = Lap(w);
    return out;
  });
  std::vector<std::string> problems;
  {
    const verifier::VerifyResult v =
        verifier::Verify(std::shared_ptr<const verifier::Manifest>(shared));
    for (const verifier::Diagnostic& d : v.diags) {
      problems.push_back(fmt::format("{} {} {}", d.code, d.pointer, d.message));
    }
  }  // the verifier's references go here
  ms.verify = Lap(t);
  Built out{.text = text.get()};
  ms.write = write_ms;
  if (!problems.empty()) {
    return base::Status::Error(
        fmt::format("import made a manifest that does not verify clean: {}", FirstFew(problems)),
        base::ErrorKind::kInternal);
  }
  out.manifest = std::move(*shared);  // the last owner: nothing else sees it any more
  return out;
}

void Count(const verifier::Manifest& m, ImportResult& r) {
  for (const verifier::Buffer& b : m.buffers) {
    switch (b.kind) {
      case verifier::BufferKind::kWeight: ++r.weights; break;
      case verifier::BufferKind::kSource: ++r.sources; break;
      case verifier::BufferKind::kCarry: ++r.carries; break;
      case verifier::BufferKind::kState: ++r.kv_layers; break;
      default: break;
    }
  }
}

}  // namespace

base::Result<ImportResult> ImportModel(const std::string& dir, const ImportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return base::Status::Error(fmt::format("{}: not a model folder (a directory with config.json "
                                           "and safetensors shards)",
                                           dir),
                               base::ErrorKind::kIo);
  }
  Clock::time_point t = Clock::now();
  ImportResult::Times ms;
  base::Result<HfConfig> config = ReadHfConfig((fs::path(dir) / "config.json").string());
  ms.config = Lap(t);
  if (!config.ok()) return config.status();
  const HfConfig& c = *config;
  if (base::Status st = CheckOptions(options); !st.ok()) return st;
  base::Result<TensorTable> table = TensorTable::Open(dir);
  if (!table.ok()) return table.status();
  ms.headers = Lap(t);
  // The check against the config runs beside the recipe and the builder calls (both only read
  // the table; every recipe checks the ranks it indexes). Its verdict comes first: what the
  // builder made is dropped when the tensors disagree with the config.
  std::future<base::Result<ConfigCheck>> checking = std::async(std::launch::async, [&] {
    Clock::time_point start = Clock::now();
    base::Result<ConfigCheck> out = CheckAgainstConfig(c, *table);
    ms.check = Lap(start);
    return out;
  });

  ImportResult r{.model_type = c.model_type,
                 .recipe = options.recipe == Recipe::kAuto ? ChooseRecipe(c) : options.recipe,
                 .tensors = table->all().size(),
                 .shards = table->files()};
  verifier::ManifestBuilder b(options.name.empty() ? FolderName(dir) : options.name);
  b.Var("batch", 1, options.max_batch.value_or(kDefaultMaxBatch))
      .Var("ctx", 1, options.max_ctx.value_or(c.max_positions));
  AddKvCache(b, c, options.kv_dtype);  // "kv_cache.*" names sort before the model's
  base::Result<RecipeOutcome> recipe = ApplyRecipe(r.recipe, c, *table, b);
  if (!recipe.ok()) {
    const base::Result<ConfigCheck> check = checking.get();
    return check.ok() ? recipe.status() : check.status();
  }
  if (recipe->carries > 0) b.Load(4, 1);  // as the gpt-oss example: 4 lanes, 1 derive ahead
  for (const Tensor& t : table->all()) {
    if (recipe->claimed.contains(t.name)) continue;
    b.Checkpoint(t.name, t.name, t.dtype, verifier::Dims(t.shape.begin(), t.shape.end()));
  }
  examples::AddStandardKernels(
      b, std::vector<std::string_view>(recipe->kernels.begin(), recipe->kernels.end()));
  ms.build = Lap(t);  // the recipe and the builder calls; BuildVerified adds Build()
  const base::Result<ConfigCheck> check = checking.get();
  if (!check.ok()) return check.status();
  base::Result<Built> m = BuildVerified(b, ms);
  if (!m.ok()) return m.status();
  r.manifest = std::move(m->manifest);
  r.text = std::move(m->text);
  r.notes = std::move(recipe->notes);
  NoteUnrecognised(*check, r);
  r.kv_bytes_per_token = KvBytesPerToken(c, options.kv_dtype);
  r.layers = c.layers;
  r.hidden = c.hidden;
  Count(r.manifest, r);
  r.ms = ms;
  return r;
}

}  // namespace loadplan::importer
