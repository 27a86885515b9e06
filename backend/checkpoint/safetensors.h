// safetensors checkpoints: one open file read with pread (never mapped: a file truncated
// underneath gives an error, not SIGBUS), validated as strictly as the reference
// implementation (huggingface/safetensors `SafeTensors::deserialize`).
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

#include "backend/checkpoint/file_read.h"
#include "base/dtype.h"
#include "base/status.h"

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

// What identifies a file's contents at open: device, inode, size, modification time.
struct FileIdentity {
  uint64_t device = 0, inode = 0;
  uint64_t size = 0;     // bytes
  int64_t mtime_ns = 0;  // since the epoch
  bool operator==(const FileIdentity&) const = default;
};

// An open, validated file. Move-only; closes its descriptor on destruction.
class SafetensorsFile {
 public:
  // kIo when the file cannot be opened or read, kInvalidInput when its bytes are not a
  // valid safetensors file ("x.safetensors: header length 200000000 is over the 100000000
  // byte limit"). Reads the 8-byte length and the header only.
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
  // The tensor's absolute offset in the file (for pread).
  [[nodiscard]] uint64_t FileOffset(const TensorInfo& t) const { return data_offset_ + t.begin; }
  // The descriptor opened at Open (O_RDONLY | O_CLOEXEC): readers pread it, never reopen the
  // path (which may name another file by now).
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const FileIdentity& identity() const { return identity_; }
  [[nodiscard]] FileRef Ref() const { return {path_, fd_, identity_.size}; }

  // Reads [offset_in_tensor, + out.size()) of tensor `t` (one of this file's) into `out`
  // (ReadExact: its errors name this file, the tensor and the offset). kInternal when the
  // range is outside the tensor. Thread-safe.
  [[nodiscard]] base::Status Read(const TensorInfo& t, uint64_t offset_in_tensor,
                                  std::span<uint8_t> out, IoFaultState* faults = nullptr) const;
  // The whole tensor in a new vector (Read's errors).
  [[nodiscard]] base::Result<std::vector<uint8_t>> ReadAll(const TensorInfo& t) const;
  // kIo when the file changed since Open: its size or modification time (fstat of the
  // descriptor), or the path is gone (deleted) or names another inode (replaced). Readers
  // call it before the first read of a load and after the last.
  [[nodiscard]] base::Status CheckUnchanged() const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  int fd_ = -1;
  FileIdentity identity_;
  uint64_t data_offset_ = 0;  // 8 + header length
  std::vector<TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
  std::vector<uint32_t> by_name_;  // tensors_ indices, sorted by name (names are unique)
};

}  // namespace loadplan::backend
