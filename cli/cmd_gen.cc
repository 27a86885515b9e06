// `loadplan gen` and `loadplan example`.
#include "cli/cmd_gen.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "backend/checkpoint/synthetic.h"
#include "cli/pipeline.h"
#include "cli/progress.h"
#include "examples/examples.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

namespace fs = std::filesystem;

// Bytes of the checkpoint for m: every bound tensor of the layers kept (shapes are variable-free,
// rule K5) plus a generous allowance for the shard headers and the index.
uint64_t CheckpointBytes(const verifier::Manifest& m, std::optional<int> layers) {
  uint64_t total = 1 << 20;
  for (const verifier::Buffer& b : m.buffers) {
    const std::vector<std::string_view> tensors = verifier::BoundTensors(b);
    const auto kept = [&](std::string_view t) {
      return !layers || !backend::BeyondLayers(t, *layers);
    };
    if (std::none_of(tensors.begin(), tensors.end(), kept)) continue;
    const std::optional<int64_t> r = verifier::ValueAt(verifier::ByteSize(b), {});
    total += static_cast<uint64_t>(r.value_or(0)) + 512 * tensors.size();
  }
  return total;
}

// The output directory must be a writable directory or creatable; a usage error otherwise.
std::string CheckOutputDir(const std::string& dir) {
  std::error_code ec;
  fs::path p(dir);
  const fs::file_status st = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return fmt::format("cannot use {}: {}", dir, ec.message());
  if (fs::exists(st) && !fs::is_directory(st))
    return fmt::format("{} exists and is not a directory", dir);
  // The nearest existing ancestor decides whether the directory can be created and written.
  while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  if (!fs::exists(p, ec)) p = ".";
  if (!fs::is_directory(p, ec))
    return fmt::format("cannot create {}: {} is not a directory", dir, p.string());
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    return fmt::format("cannot write into {}: not writable", p.string());
  return {};
}

// Free space where the checkpoint goes, against what it needs.
std::string CheckFreeSpace(const std::string& dir, uint64_t needed) {
  std::error_code ec;
  fs::path p(dir);
  while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
  const fs::space_info space = fs::space(fs::exists(p, ec) ? p : fs::path("."), ec);
  if (ec) return {};  // unknown: let the writes say
  if (needed <= space.available) return {};
  return fmt::format("{} needs {} bytes ({:.3f} GB), {} has {} bytes ({:.3f} GB) free", dir, needed,
                     needed / 1e9, p.string(), space.available, space.available / 1e9);
}

int WriteCheckpoint(const verifier::Manifest& m, const GenCliOptions& o) {
  ProgressBar bar("gen");
  const base::Result<backend::GenSummary> r = backend::GenerateCheckpoint(
      m, {.dir = o.out_dir,
          .seed = o.seed,
          .shard_bytes = o.shard_bytes,
          .layers = o.layers,
          .progress = [&](uint64_t done, uint64_t total) { bar.Update(done, total); }});
  if (!r.ok()) {
    std::fprintf(stderr, "loadplan gen: %s\n", r.status().message().c_str());
    return 1;
  }
  std::printf("%s: %zu tensors, %.3f GB in %zu shard%s (seed %llu)\n", o.out_dir.c_str(),
              r->tensors, r->bytes / 1e9, r->shards, r->shards == 1 ? "" : "s",
              static_cast<unsigned long long>(o.seed));
  return 0;
}

}  // namespace

int RunGen(const GenCliOptions& o) {
  if (o.manifest.empty() && !o.yes) {
    std::fputs(
        "loadplan gen: name a manifest (or pass --yes to write the embedded gpt-oss-120b example, "
        "about 65 GB)\n",
        stderr);
    return 2;
  }
  if (std::string err = CheckOutputDir(o.out_dir); !err.empty()) {
    std::fprintf(stderr, "loadplan gen: %s\n", err.c_str());
    return 2;
  }
  const Outcome<CheckedInput> in = LoadVerified(o.manifest, {.command = "loadplan gen"});
  if (!in.ok()) return in.exit_code();
  const verifier::Manifest& m = *in->check.manifest;
  if (std::string err = CheckFreeSpace(o.out_dir, CheckpointBytes(m, o.layers)); !err.empty()) {
    std::fprintf(stderr, "loadplan gen: not enough disk space: %s\n", err.c_str());
    return 2;
  }
  return WriteCheckpoint(m, o);
}

int RunExample(const ExampleCliOptions& o) {
  if (o.layers && !examples::ExampleHasLayers(o.name)) {
    std::fprintf(stderr,
                 "loadplan example: --layers applies to gpt-oss-120b and k3-stage, not %s\n",
                 o.name.c_str());
    return 2;
  }
  const verifier::BuildResult built = examples::BuildExample(o.name, o.layers);
  if (!built.ok()) {
    for (const auto& e : built.errors) std::fprintf(stderr, "loadplan example: %s\n", e.c_str());
    return 2;
  }
  const base::Status written =
      WriteOutput(o.out.empty() ? "-" : o.out, verifier::WriteManifest(built.manifest));
  if (!written.ok()) {
    std::fprintf(stderr, "loadplan example: %s\n", written.message().c_str());
    return 2;
  }
  if (!o.out.empty() && o.out != "-")
    std::fprintf(stderr, "wrote %s: the %s example, %zu buffers\n", o.out.c_str(), o.name.c_str(),
                 built.manifest.buffers.size());
  return 0;
}

}  // namespace loadplan::cli
