// ImportModel: config + headers -> builder -> verified manifest.
#include "importer/import.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builders/kernels.h"
#include "importer/families.h"
#include "importer/hf_config.h"
#include "importer/kv_cache.h"
#include "importer/layouts.h"
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

// The option's value in [lo, hi], named as the CLI and Python spell it.
base::Status InRange(std::string_view flag, std::optional<int64_t> v, int64_t lo, int64_t hi) {
  if (!v || (*v >= lo && *v <= hi)) return base::Status::Ok();
  std::string keyword(flag.substr(2));
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return base::Status::Error(
      fmt::format("{} ({}) {} is not in [{}, {}]", flag, keyword, *v, lo, hi),
      base::ErrorKind::kOption);
}

base::Status CheckOptions(const ImportOptions& o) {
  constexpr int64_t kMaxVar = std::numeric_limits<int32_t>::max();
  for (base::Status st :
       {InRange("--max-batch", o.max_batch, 1, kMaxVar),
        InRange("--max-ctx", o.max_ctx, 1, kMaxVar),
        InRange("--kv-bytes-per-token", o.kv_bytes_per_token, 1, int64_t{1} << 40)}) {
    if (!st.ok()) return st;
  }
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  if (std::any_of(o.name.begin(), o.name.end(), control)) {  // what check's S5 would refuse
    return base::Status::Error(
        fmt::format("--name (name) {:?} holds a control character: a manifest name cannot", o.name),
        base::ErrorKind::kOption);
  }
  return base::Status::Ok();
}

// config.json, or (not strict) what a folder without one means.
base::Result<HfConfig> ReadConfigOf(const std::string& dir, bool strict) {
  const std::string path = (fs::path(dir) / "config.json").string();
  std::error_code ec;
  if (!strict && !fs::exists(path, ec)) return NoConfig(path);
  return ReadHfConfig(path, strict);
}

void NoteUnrecognised(const HfConfig& c, const ConfigCheck& check, ImportResult& r) {
  if (check.mtp_absent) {
    r.notes.push_back(fmt::format(
        "{} names {} MTP layer{} (num_nextn_predict_layers) the checkpoint does not hold "
        "(transformers does not save them): none is loaded",
        c.path, c.mtp_layers, c.mtp_layers == 1 ? "" : "s"));
  }
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
  size_t overflow = 0;  // S9: a size that overflows at the variables' bounds
  {
    const verifier::VerifyResult v =
        verifier::Verify(std::shared_ptr<const verifier::Manifest>(shared));
    for (const verifier::Diagnostic& d : v.diags) {
      problems.push_back(fmt::format("{} {} {}", d.code, d.pointer, d.message));
      overflow += d.code == "S9" && d.message.find("overflow") != std::string::npos;
    }
  }  // the verifier's references go here
  ms.verify = Lap(t);
  Built out{.text = text.get()};
  ms.write = write_ms;
  if (!problems.empty() && overflow == problems.size()) {  // the bounds asked for, not a bug
    return base::Status::Error(
        fmt::format("--max-batch and --max-ctx (max_batch, max_ctx) make a buffer larger than 64 "
                    "bits can count: lower them ({})",
                    FirstFew(problems)),
        base::ErrorKind::kOption);
  }
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
      case verifier::BufferKind::kState:
        if (b.name.starts_with("kv_cache")) ++r.kv_layers;
        break;
      default: break;
    }
  }
}

// Every tensor neither the recipe nor the layout took, bound whole under its name (or
// transformers' name for it). Under a conversion two tensors may come to one name (a renamed
// tensor beside one already so named, or beside a stack): the folder's problem, said as such.
base::Status BindTheRest(const LayoutConversion* conversion, const TensorTable& table,
                         const RecipeOutcome& recipe, const LayoutOutcome& layout,
                         verifier::ManifestBuilder& b) {
  std::map<std::string, std::string, std::less<>> bound;  // buffer -> what it binds
  for (const std::string& s : layout.targets) bound.emplace(s, "a stack of experts");
  for (const Tensor& t : table.all()) {
    if (recipe.claimed.contains(t.name) || layout.claimed.contains(t.name)) continue;
    const std::string name = conversion ? TransformersName(*conversion, t.name) : t.name;
    if (const auto [it, fresh] = bound.emplace(name, t.name); !fresh && conversion) {
      return base::Status::Error(fmt::format(
          "layout transformers: {} and {} both become buffer {} (use the checkpoint layout)",
          it->second, t.name, name));
    }
    b.Checkpoint(name, t.name, t.dtype, verifier::Dims(t.shape.begin(), t.shape.end()));
  }
  return base::Status::Ok();
}

// The result's notes, warnings and counts, from what each step of the import said.
void Describe(const HfConfig& c, const RecipeOutcome& recipe, const CacheOutcome& cache,
              const LayoutOutcome& layout, ConfigCheck check, ImportResult& r) {
  r.notes = c.notes;
  r.notes.insert(r.notes.end(), recipe.notes.begin(), recipe.notes.end());
  r.notes.insert(r.notes.end(), cache.notes.begin(), cache.notes.end());
  r.notes.insert(r.notes.end(), layout.notes.begin(), layout.notes.end());
  r.stacks = layout.stacks;
  NoteUnrecognised(c, check, r);
  r.warnings = std::move(check.problems);
  if (const std::string more = UnlistedText(check); !more.empty()) r.warnings.push_back(more);
  r.kv_bytes_per_token = cache.bytes_per_token;
  r.state_bytes_per_sequence = cache.state_bytes;
  r.state_layers = cache.state_layers;
  r.layers = c.layers;
  r.hidden = c.hidden;
  Count(r.manifest, r);
}

}  // namespace

// transformers' layout: the conversion of this model_type's class stacked by the reads (a
// family with none keeps the checkpoint's names, with a note). Experts a recipe took as sources
// (FP8 dequantized one by one) cannot be stacked by a read: refused.
base::Result<LayoutOutcome> ApplyLayout(Layout layout, const HfConfig& c, const TensorTable& t,
                                        Recipe recipe_applied, const RecipeOutcome& recipe,
                                        verifier::ManifestBuilder& b) {
  if (layout != Layout::kTransformers) return LayoutOutcome{};
  const LayoutConversion* conversion = ConversionOf(c.model_type);
  if (conversion == nullptr) {
    return LayoutOutcome{
        .notes = {fmt::format("layout transformers: transformers 5.17 converts nothing for "
                              "model_type \"{}\"; the checkpoint's names and shapes are its own",
                              c.model_type)}};
  }
  for (const std::string& name : recipe.claimed) {
    if (MatchesMerge(*conversion, name)) {
      return base::Status::Error(fmt::format(
          "layout transformers: {} is a source of recipe {} and cannot be stacked into "
          "transformers' fused experts by a read (use the checkpoint layout, or recipe none)",
          name, RecipeName(recipe_applied)));
    }
  }
  LayoutOutcome out = AddLayoutStacks(*conversion, t, recipe.claimed, b);
  AddLayoutSplits(*conversion, t, recipe.claimed, b, out);
  out.notes.insert(
      out.notes.begin(),
      fmt::format("layout transformers ({} conversion of transformers 5.17): {} "
                  "stacked buffers{}, renames {}",
                  conversion->pattern, out.stacks,
                  out.splits > 0 ? fmt::format(", {} slices of fused tensors", out.splits) : "",
                  conversion->renames.empty() ? "none" : "applied"));
  return out;
}

std::optional<Layout> ParseLayout(std::string_view name) {
  if (name == "checkpoint") return Layout::kCheckpoint;
  if (name == "transformers") return Layout::kTransformers;
  return std::nullopt;
}

std::string_view LayoutName(Layout l) {
  return l == Layout::kTransformers ? "transformers" : "checkpoint";
}

namespace {

base::Status CheckFolder(const std::string& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return base::Status::Ok();
  return base::Status::Error(fmt::format("{}: not a model folder (a directory with config.json "
                                         "and safetensors shards)",
                                         dir),
                             base::ErrorKind::kIo);
}

// The result's header and the manifest's variables and cache, before any tensor is bound.
ImportResult StartResult(const HfConfig& c, const TensorTable& table, const ImportOptions& o) {
  return {.model_type = c.model_type,
          .recipe = o.recipe == Recipe::kAuto ? ChooseRecipe(c, o.layout == Layout::kTransformers)
                                              : o.recipe,
          .layout = o.layout,
          .tensors = table.all().size(),
          .shards = table.files()};
}

// Strict: the config's verdict comes first (what the builder made is dropped).
base::Status Verdict(const ImportOptions& o, const HfConfig& c, const ConfigCheck& check) {
  return o.strict && !check.problems.empty() ? ProblemsStatus(c, check) : base::Status::Ok();
}

}  // namespace

base::Result<ImportResult> ImportModel(const std::string& dir, const ImportOptions& options) {
  if (base::Status st = CheckFolder(dir); !st.ok()) return st;
  Clock::time_point t = Clock::now();
  ImportResult::Times ms;
  if (base::Status st = CheckOptions(options); !st.ok()) return st;
  base::Result<HfConfig> config = ReadConfigOf(dir, options.strict);
  ms.config = Lap(t);
  if (!config.ok()) return config.status();
  const HfConfig& c = *config;
  base::Result<TensorTable> table = TensorTable::Open(dir);
  if (!table.ok()) return table.status();
  ms.headers = Lap(t);
  // The check against the config runs beside the recipe and the builder calls (both only read
  // the table; every recipe checks the ranks it indexes). Its verdict comes first: what the
  // builder made is dropped when the tensors disagree with the config.
  std::future<ConfigCheck> checking = std::async(std::launch::async, [&] {
    Clock::time_point start = Clock::now();
    ConfigCheck out = CheckAgainstConfig(c, *table);
    ms.check = Lap(start);
    return out;
  });
  ImportResult r = StartResult(c, *table, options);
  verifier::ManifestBuilder b(options.name.empty() ? FolderName(dir) : options.name);
  b.Var("batch", 1, options.max_batch.value_or(kDefaultMaxBatch))
      .Var("ctx", 1, options.max_ctx.value_or(c.max_positions));
  const CacheOutcome cache = AddCache(b, c, options.kv_dtype, options.kv_bytes_per_token);
  base::Result<RecipeOutcome> recipe = ApplyRecipe(r.recipe, c, *table, b);
  if (!recipe.ok()) {
    const base::Status st = Verdict(options, c, checking.get());
    return st.ok() ? recipe.status() : st;
  }
  if (recipe->carries > 0) b.Load(4, 1);  // as the gpt-oss example: 4 lanes, 1 derive ahead
  base::Result<LayoutOutcome> layout = ApplyLayout(options.layout, c, *table, r.recipe, *recipe, b);
  if (!layout.ok()) return layout.status();
  const LayoutConversion* conversion =
      options.layout == Layout::kTransformers ? ConversionOf(c.model_type) : nullptr;
  if (base::Status st = BindTheRest(conversion, *table, *recipe, *layout, b); !st.ok()) return st;
  builders::AddStandardKernels(
      b, std::vector<std::string_view>(recipe->kernels.begin(), recipe->kernels.end()));
  ms.build = Lap(t);  // the recipe and the builder calls; BuildVerified adds Build()
  ConfigCheck check = checking.get();
  if (base::Status st = Verdict(options, c, check); !st.ok()) return st;
  base::Result<Built> m = BuildVerified(b, ms);
  if (!m.ok()) return m.status();
  r.manifest = std::move(m->manifest);
  r.text = std::move(m->text);
  Describe(c, *recipe, cache, *layout, std::move(check), r);
  r.ms = ms;
  return r;
}

}  // namespace loadplan::importer
