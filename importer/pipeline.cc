// ImportPipeline: the imported manifest split into pipeline stages (importer/pipeline.h).
#include "importer/pipeline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::importer {
namespace {

using verifier::Buffer;
using verifier::BufferKind;
using verifier::Manifest;

constexpr std::string_view kEmbeddings = "model.embed_tokens.weight";
constexpr std::string_view kHead = "lm_head.weight";
constexpr std::string_view kHiddenIn = "hidden_in";
constexpr std::string_view kHiddenOut = "hidden_out";

// The layer a buffer's name numbers: `model.layers.N.*` or `kv_cache.N`.
std::optional<int64_t> LayerOf(std::string_view name) {
  for (const std::string_view prefix :
       {std::string_view("model.layers."), std::string_view("kv_cache.")}) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view rest = name.substr(prefix.size());
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec != std::errc() || end == rest.data()) return std::nullopt;
    if (end != rest.data() + rest.size() && *end != '.') return std::nullopt;
    return n;
  }
  return std::nullopt;
}

// Where a buffer goes.
struct Place {
  std::optional<int64_t> layer;  // a layer's
  bool first = false;            // stage 0's
  bool last = false;             // the last stage's
};

Place PlaceOf(const Manifest& m, const Buffer& b, int64_t layers) {
  if (const std::optional<int64_t> l = LayerOf(b.name); l && *l < layers) return {.layer = l};
  if (b.name == kEmbeddings) {  // a tied head reads the embeddings on the last stage too
    return {.first = true, .last = m.FindBuffer(kHead) == nullptr};
  }
  return {.last = true};  // final norm, head, MTP layers, unrecognised model-level tensors
}

bool Keeps(const Place& p, const StageSpec& s) {
  if (p.layer) return *p.layer >= s.layers.begin && *p.layer < s.layers.end;
  return (p.first && s.first) || (p.last && s.last);
}

uint64_t CheckpointBytes(const Buffer& b) {
  if (!verifier::IsCheckpointBound(b.kind)) return 0;
  const std::optional<int64_t> e = verifier::ValueAt(verifier::ByteSize(b), {});
  return e && *e > 0 ? static_cast<uint64_t>(*e) : 0;
}

void Add(uint64_t& total, uint64_t bytes) {
  total = base::CheckedAdd(total, bytes).value_or(UINT64_MAX);  // saturates; never in practice
}

// The buffers one program binds.
std::set<std::string> BoundBuffers(const verifier::Program& p) {
  std::set<std::string> out;
  for (const verifier::Call& c : p.calls) {
    if (c.type == verifier::CallType::kCollective) out.insert(c.buffer);
    for (const verifier::Arg& a : c.args) {
      if (a.buffer) out.insert(*a.buffer);
    }
  }
  return out;
}

Buffer Boundary(std::string_view name, BufferKind kind, int64_t hidden) {
  return {.name = std::string(name),
          .kind = kind,
          .dtype = base::Dtype::kBF16,
          .shape = {verifier::Expr::Var("batch"), verifier::Expr::Const(hidden)},
          .exported = kind == BufferKind::kOutput};
}

base::Status Internal(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kInternal);
}

// The programs of `full` that bind the stage's buffers (all of them or none).
base::Status KeepPrograms(const Manifest& full, const std::set<std::string>& kept,
                          const StageSpec& spec, Manifest& out) {
  for (const verifier::Program& p : full.programs) {
    const std::set<std::string> bound = BoundBuffers(p);
    const size_t in = static_cast<size_t>(std::count_if(
        bound.begin(), bound.end(), [&](const std::string& n) { return kept.contains(n); }));
    if (in != 0 && in != bound.size()) {
      return Internal(
          fmt::format("{}: program `{}` binds buffers of two pipeline stages", spec.name, p.name));
    }
    if (in == bound.size()) out.programs.push_back(p);  // a program binding nothing: every stage
  }
  return base::Status::Ok();
}

// Stage k of `ranges`: its manifest, text and checkpoint bytes.
base::Result<PipelineStage> MakeStage(const ImportResult& r, const LayerBytes& bytes,
                                      const std::vector<LayerRange>& ranges, size_t k) {
  const StageSpec spec{.layers = ranges[k],
                       .first = k == 0,
                       .last = k + 1 == ranges.size(),
                       .model_layers = r.layers,
                       .hidden = r.hidden,
                       .name = fmt::format("{}-stage-{}", r.manifest.name, k)};
  base::Result<Manifest> m = StageManifest(r.manifest, spec);
  if (!m.ok()) return m.status();
  PipelineStage s{.manifest = std::move(*m), .layers = ranges[k]};
  for (int64_t l = spec.layers.begin; l < spec.layers.end; ++l) {
    Add(s.bytes, bytes.layers[static_cast<size_t>(l)]);
  }
  if (spec.first) Add(s.bytes, bytes.first);
  if (spec.last) Add(s.bytes, bytes.last);
  s.text = verifier::WriteManifest(s.manifest);
  return s;
}

}  // namespace

LayerBytes CountLayerBytes(const Manifest& m, int64_t layers) {
  LayerBytes out{.layers =
                     std::vector<uint64_t>(static_cast<size_t>(std::max<int64_t>(layers, 0)))};
  for (const Buffer& b : m.buffers) {
    const uint64_t bytes = CheckpointBytes(b);
    const Place p = PlaceOf(m, b, layers);
    if (p.layer) Add(out.layers[static_cast<size_t>(*p.layer)], bytes);
    if (p.first) Add(out.first, bytes);
    if (p.last) Add(out.last, bytes);
  }
  return out;
}

std::vector<LayerRange> BalanceLayers(const LayerBytes& bytes, int64_t stages) {
  const auto n = static_cast<int64_t>(bytes.layers.size());
  // prefix[i]: the embeddings' bytes plus those of layers 0..i-1.
  std::vector<long double> prefix(static_cast<size_t>(n) + 1);
  prefix[0] = static_cast<long double>(bytes.first);
  for (int64_t i = 0; i < n; ++i) {
    prefix[static_cast<size_t>(i) + 1] =
        prefix[static_cast<size_t>(i)] +
        static_cast<long double>(bytes.layers[static_cast<size_t>(i)]);
  }
  const long double total = prefix[static_cast<size_t>(n)] + static_cast<long double>(bytes.last);
  std::vector<LayerRange> out;
  int64_t begin = 0;
  for (int64_t k = 1; k < stages; ++k) {
    const long double target =
        total * static_cast<long double>(k) / static_cast<long double>(stages);
    // Each stage keeps at least one layer: the cut lies in [begin + 1, n - (stages - k)].
    int64_t best = begin + 1;
    for (int64_t i = begin + 1; i <= n - (stages - k); ++i) {
      if (std::fabs(prefix[static_cast<size_t>(i)] - target) <
          std::fabs(prefix[static_cast<size_t>(best)] - target)) {
        best = i;
      }
    }
    out.push_back({begin, best});
    begin = best;
  }
  out.push_back({begin, n});
  return out;
}

base::Result<Manifest> StageManifest(const Manifest& full, const StageSpec& spec) {
  Manifest out{.schema = full.schema,
               .name = spec.name,
               .vars = full.vars,
               .load = full.load,
               .kernels = full.kernels};
  std::set<std::string> kept;
  for (const Buffer& b : full.buffers) {
    if (!Keeps(PlaceOf(full, b, spec.model_layers), spec)) continue;
    out.buffers.push_back(b);
    kept.insert(b.name);
  }
  if (!spec.first) out.buffers.push_back(Boundary(kHiddenIn, BufferKind::kInput, spec.hidden));
  if (!spec.last) out.buffers.push_back(Boundary(kHiddenOut, BufferKind::kOutput, spec.hidden));
  if (base::Status st = KeepPrograms(full, kept, spec, out); !st.ok()) return st;
  verifier::SortModel(out);
  verifier::AssignPointers(out);
  auto shared = std::make_shared<const Manifest>(std::move(out));
  const verifier::VerifyResult v = verifier::Verify(shared);
  if (!v.diags.empty()) {
    const verifier::Diagnostic& d = v.diags.front();
    return Internal(
        fmt::format("pipeline stage {} does not verify clean: {} {} {} ({} diagnostics)", spec.name,
                    d.code, d.pointer, d.message, v.diags.size()));
  }
  return *shared;
}

std::string StageFileName(size_t k) { return fmt::format("stage-{}.json", k); }

base::Result<PipelineImport> ImportPipeline(const std::string& dir, int64_t stages,
                                            const ImportOptions& options) {
  if (stages < 1) {
    return base::Status::Error(fmt::format("--pipeline {} is not >= 1", stages));
  }
  base::Result<ImportResult> full = ImportModel(dir, options);
  if (!full.ok()) return full.status();
  PipelineImport out{.full = std::move(*full)};
  const ImportResult& r = out.full;
  if (stages > r.layers) {
    return base::Status::Error(
        fmt::format("--pipeline {}: {} has {} layers, and every stage needs at least one "
                    "(1 <= N <= {})",
                    stages, r.manifest.name, r.layers, r.layers));
  }
  const LayerBytes bytes = CountLayerBytes(r.manifest, r.layers);
  const std::vector<LayerRange> ranges = BalanceLayers(bytes, stages);
  nlohmann::ordered_json deploy{{"deployment", fmt::format("{}-pp{}", r.manifest.name, stages)},
                                {"stages", nlohmann::ordered_json::array()}};
  for (size_t k = 0; k < ranges.size(); ++k) {
    base::Result<PipelineStage> s = MakeStage(r, bytes, ranges, k);
    if (!s.ok()) return s.status();
    out.stages.push_back(std::move(*s));
    deploy["stages"].push_back({{"manifest", StageFileName(k)}});
  }
  out.deployment = deploy.dump(2) + "\n";
  return out;
}

}  // namespace loadplan::importer
