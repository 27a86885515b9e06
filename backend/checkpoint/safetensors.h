// safetensors checkpoints: one file read by mmap, validated as strictly as the
// reference implementation (huggingface/safetensors `SafeTensors::deserialize`).
//
// Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON
// {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {str: str}},
// then the data. Offsets are relative to the end of the header; sorted by begin
// they must tile [0, data length) exactly: start at 0, no gaps, no overlap.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/dtype.h"

namespace loadplan::backend {

inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference's limit

struct TensorInfo {
  std::string name;
  base::Dtype dtype = base::Dtype::kU8;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the data section
  uint64_t end = 0;    // half-open
  [[nodiscard]] uint64_t bytes() const { return end - begin; }
  bool operator==(const TensorInfo&) const = default;
};

// Parses and validates a header (the bytes after the 8-byte length) for a data
// section of `data_bytes`. On failure a kInvalidInput status whose message names the tensor.
struct ParsedHeader {
  std::vector<TensorInfo> tensors;  // sorted by begin offset
  std::map<std::string, std::string> metadata;
};
base::Result<ParsedHeader> ParseSafetensorsHeader(std::string_view header, uint64_t data_bytes);

// A mapped, validated file. Move-only; unmaps on destruction.
class SafetensorsFile {
 public:
  // kIo when the file cannot be opened or mapped, kInvalidInput when its bytes are not a
  // valid safetensors file ("x.safetensors: header length 200000000 is over the 100000000
  // byte limit").
  static base::Result<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  SafetensorsFile(SafetensorsFile&&) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&&) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile();

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::vector<TensorInfo>& tensors() const { return tensors_; }
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }
  [[nodiscard]] const TensorInfo* Find(std::string_view name) const;
  // The tensor's bytes in the mapping, and its absolute offset in the file (for pread).
  [[nodiscard]] std::span<const uint8_t> Data(const TensorInfo& t) const;
  [[nodiscard]] uint64_t FileOffset(const TensorInfo& t) const { return data_offset_ + t.begin; }

 private:
  SafetensorsFile() = default;
  std::string path_;
  const uint8_t* map_ = nullptr;
  uint64_t map_bytes_ = 0;
  uint64_t data_offset_ = 0;  // 8 + header length
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::vector<uint32_t> by_name_;  // tensors_ indices, sorted by name (names are unique)
};

}  // namespace loadplan::backend
