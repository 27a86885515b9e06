// Writing safetensors files (for `loadplan gen` and tests): the header from
// tensor specs, then each tensor's bytes streamed from a callback.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/dtype.h"

namespace loadplan::backend {

struct TensorSpec {
  std::string name;
  base::Dtype dtype = base::Dtype::kU8;
  std::vector<uint64_t> shape;
};

// Bytes of a tensor: elements x bits / 8; nullopt when it overflows or is not whole bytes.
std::optional<uint64_t> TensorBytes(const TensorSpec& t);

// The header JSON (offsets in the order given, padded with spaces to a multiple of 8
// as the reference writer does).
std::string SafetensorsHeader(const std::vector<TensorSpec>& tensors,
                              const std::map<std::string, std::string>& metadata);

// fill(index, chunk_offset, out) writes the next out.size() bytes of tensor `index`.
using FillFn = std::function<void(size_t index, uint64_t offset, std::span<uint8_t> out)>;

// Writes the file: kInvalidInput for a tensor whose bytes do not fit, kIo when a write
// fails. Never leaves a partial file at `path` (writes to path + ".tmp", then renames).
[[nodiscard]] base::Status WriteSafetensors(const std::string& path,
                                            const std::vector<TensorSpec>& tensors,
                                            const std::map<std::string, std::string>& metadata,
                                            const FillFn& fill);

}  // namespace loadplan::backend
