// `loadplan gen` and `loadplan example`.
#include "cli/cmd_gen.h"

#include <cstdio>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "backend/synthetic.h"
#include "cli/input.h"
#include "cli/progress.h"
#include "examples/examples.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

// True when the tensor belongs to a layer >= n ("...layers.K....").
bool BeyondLayers(const std::string& tensor, int n) {
  static const std::regex kLayer(R"((^|\.)layers\.(\d+)\.)");
  std::smatch m;
  return std::regex_search(tensor, m, kLayer) && std::stoll(m[2].str()) >= n;
}

}  // namespace

int RunGen(const GenCliOptions& o) {
  CheckedInput in = LoadAndCheck(o.manifest);
  if (!in.read_error.empty()) {
    std::fprintf(stderr, "loadplan gen: %s\n", in.read_error.c_str());
    return 2;
  }
  if (!in.check.parsed || !in.check.result.ok()) {
    std::fputs(verifier::FormatText(in.check.result.diags, in.display_name).c_str(), stderr);
    return in.check.parsed ? 1 : 2;
  }
  verifier::Manifest m = *in.check.manifest;
  if (o.layers) {
    std::erase_if(m.buffers, [&](const verifier::Buffer& b) { return b.tensor && BeyondLayers(*b.tensor, *o.layers); });
  }
  ProgressBar bar("gen");
  const backend::GenResult r = backend::GenerateCheckpoint(
      m, {.dir = o.out_dir, .seed = o.seed, .shard_bytes = o.shard_bytes,
          .progress = [&](uint64_t done, uint64_t total) { bar.Update(done, total); }});
  if (!r.error.empty()) {
    std::fprintf(stderr, "loadplan gen: %s\n", r.error.c_str());
    return 1;
  }
  std::printf("%s: %zu tensors, %.3f GB in %zu shard%s (seed %llu)\n", o.out_dir.c_str(), r.tensors, r.bytes / 1e9,
              r.shards, r.shards == 1 ? "" : "s", static_cast<unsigned long long>(o.seed));
  return 0;
}

int RunExample(const ExampleCliOptions& o) {
  verifier::BuildResult built;
  if (o.layers && o.name == "gpt-oss-120b") {
    built = examples::GptOss({.name = fmt::format("gpt-oss-120b-{}l", *o.layers), .layers = *o.layers});
  } else if (o.layers && o.name == "k3-stage") {
    built = examples::K3Stage({.name = fmt::format("k3-stage-{}l", *o.layers), .layers = *o.layers});
  } else {
    built = examples::BuildExample(o.name);
  }
  if (!built.ok()) {
    for (const auto& e : built.errors) std::fprintf(stderr, "loadplan example: %s\n", e.c_str());
    return 2;
  }
  const std::string text = verifier::WriteManifest(built.manifest);
  if (o.out.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(o.out, std::ios::binary);
  out << text;
  if (!out.flush()) {
    std::fprintf(stderr, "loadplan example: cannot write %s\n", o.out.c_str());
    return 2;
  }
  return 0;
}

}  // namespace loadplan::cli
