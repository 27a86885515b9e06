// Synthetic checkpoints for a manifest (`loadplan gen`): every bound tensor, in real
// safetensors format, sharded like real checkpoints, with random bytes that are
// valid for the dtype and encoding, deterministic by seed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "verifier/manifest.h"

namespace loadplan::backend {

struct GenOptions {
  std::string dir;  // created if missing
  uint64_t seed = 0;
  uint64_t shard_bytes = uint64_t{4} << 30;  // start a new shard past this many bytes
  // Keep only the tensors of layers < N (BeyondLayers); unset: every tensor.
  std::optional<int> layers;
  // Called after each chunk written: (bytes done, bytes total).
  std::function<void(uint64_t, uint64_t)> progress;
};

struct GenSummary {
  uint64_t bytes = 0;
  size_t tensors = 0;
  size_t shards = 0;
  bool operator==(const GenSummary&) const = default;
};

// Writes model-0000K-of-0000N.safetensors shards and model.safetensors.index.json.
// Bound buffers must have variable-free shapes (rule K5): else kInvalidInput; kIo when a
// file or the directory cannot be written. A buffer's `tensor` gets the buffer's shape; each
// of its `tensors` the buffer's dtype and an equal share of its elements as a 1-D shape
// (kInvalidInput when the elements do not divide evenly among them).
base::Result<GenSummary> GenerateCheckpoint(const verifier::Manifest& m, const GenOptions& options);

// True when the tensor belongs to a layer >= n (a "layers.K." name component); a K past
// 64 bits counts as beyond.
[[nodiscard]] bool BeyondLayers(std::string_view tensor, int n);

// The bytes of a tensor at [offset, offset + out.size()): a pure function of
// (seed, tensor name, offset), so chunks can be produced in any order.
// BF16/F16/F32/F64: finite values of modest magnitude; U8 with encoding
// "e8m0": exponents in [112, 142] (never 0xFF); "fp4_e2m1x2" and other integer
// types: uniform bytes.
void SyntheticBytes(uint64_t seed, std::string_view tensor, base::Dtype dtype,
                    const std::optional<std::string>& encoding, uint64_t offset,
                    std::span<uint8_t> out);

}  // namespace loadplan::backend
