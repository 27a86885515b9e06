// `loadplan gen` (synthetic checkpoints for a manifest) and `loadplan example`
// (write a builder example, e.g. gpt-oss-120b with N layers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace loadplan::cli {

struct GenCliOptions {
  std::string manifest;  // empty: the embedded default example
  std::string out_dir;
  uint64_t seed = 0;
  std::optional<int> layers;  // keep only tensors of layers < N (names with "layers.K.")
  uint64_t shard_bytes = uint64_t{4} << 30;
  bool yes = false;  // allow the embedded example (about 65 GB) without a manifest
};
// Exit 2 (usage) without a manifest unless `yes`, when the output is not a writable directory,
// or when the file system has less free space than the checkpoint needs.
int RunGen(const GenCliOptions& options);

struct ExampleCliOptions {
  std::string name = "gpt-oss-120b";  // gpt-oss-120b | k3-stage | tiny
  std::optional<int> layers;          // gpt-oss-120b and k3-stage only
  std::string out;                    // empty: stdout
};
// `layers` with `tiny` (which has no layer count) is a usage error (exit 2).
int RunExample(const ExampleCliOptions& options);

}  // namespace loadplan::cli
