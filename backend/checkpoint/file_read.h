// Reading checkpoint bytes with pread: exact reads that survive short reads and EINTR, and
// errors that name the file, the tensor and the byte offset. A test seam (IoFaults) injects
// EIO, short reads, EOF and EINTR at a chosen read call; it is never a user-facing option.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"

namespace loadplan::backend {

// An open file descriptor, closed on destruction.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& o) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Faults to inject, by the index k of a read call (a pread that reaches the file; retries
// after EINTR included, injected EINTRs not counted), counted per IoFaultState (per load).
struct IoFaults {
  std::optional<uint64_t> eio_at_read;    // read k fails with EIO
  std::optional<uint64_t> short_at_read;  // read k returns about half of what it asked
  std::optional<uint64_t> eof_at_read;    // read k and every later one find the end of file
  bool eintr_every = false;               // every read call is interrupted (EINTR) once first
  bool operator==(const IoFaults&) const = default;
  [[nodiscard]] bool any() const {
    return eio_at_read || short_at_read || eof_at_read || eintr_every;
  }
};

// The faults of one load and its read counter; shared by every reading thread.
class IoFaultState {
 public:
  explicit IoFaultState(IoFaults faults = {}) : faults_(faults) {}
  [[nodiscard]] const IoFaults& faults() const { return faults_; }
  // Read calls made so far (counted only while some fault is set).
  [[nodiscard]] uint64_t reads() const { return reads_.load(); }
  // Takes the next read index.
  uint64_t NextRead() { return reads_++; }

 private:
  IoFaults faults_;
  std::atomic<uint64_t> reads_{0};
};

// An open file as its opener saw it.
struct FileRef {
  std::string_view path;
  int fd = -1;
  uint64_t size_at_open = 0;  // bytes
};

// What a read is for, for its error message.
struct ReadContext {
  std::string_view tensor;         // empty: the header
  uint64_t tensor_offset = 0;      // byte offset of out[0] in the tensor (or the header)
  IoFaultState* faults = nullptr;  // null: no injection
};

// Reads exactly out.size() bytes at file offset `offset`: loops over short reads, retries
// EINTR. Errors (kIo): the file ended ("x.safetensors: tensor w: byte offset 4096 (file offset
// 4200): the file ended after 0 of 4096 bytes: it is 4200 bytes now, was 9000 when opened"), or
// a failed read ("...: read failed: Input/output error"). Thread-safe (pread only).
[[nodiscard]] base::Status ReadExact(const FileRef& file, uint64_t offset, std::span<uint8_t> out,
                                     const ReadContext& context);

// ---- Direct reads (O_DIRECT: around the page cache, for files not in it; docs/runtime.md) ----

// The block grid of direct reads: offsets, lengths and buffer addresses are multiples of it.
inline constexpr uint64_t kDirectAlign = 4096;

// The buffer a direct read of at most `bytes` at any offset needs: the bytes, the offset's
// skew into its block and the end rounded up to the grid (a multiple of kDirectAlign).
[[nodiscard]] uint64_t DirectBufferBytes(uint64_t bytes);

// A second descriptor of an opened file, with O_DIRECT: reopened through /proc/self/fd, so it
// is the inode the opener validated (checked), never the path again. Closed with the object.
class DirectFile {
 public:
  // kIo naming the file when the filesystem refuses O_DIRECT ("Invalid argument").
  static base::Result<DirectFile> Open(const FileRef& file);
  [[nodiscard]] int fd() const { return fd_.get(); }

 private:
  explicit DirectFile(int fd) : fd_(fd) {}
  FileDescriptor fd_;
};

// One T for each file a load reads, made by `Make(file)` (a base::Result of a T or of a
// std::unique_ptr<T>) at the file's first use and kept until the end, keyed by the validated
// descriptor. Not thread-safe: one owner thread asks.
template <typename T, auto Make>
class PerFile {
 public:
  [[nodiscard]] base::Result<const T*> Of(const FileRef& file) {
    for (const auto& [fd, made] : files_) {
      if (fd == file.fd) return made.get();
    }
    auto made = Make(file);
    if (!made.ok()) return made.status();
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*made)>, T>) {
      files_.emplace_back(file.fd, std::make_unique<T>(std::move(*made)));
    } else {
      files_.emplace_back(file.fd, std::move(*made));
    }
    return files_.back().second.get();
  }

 private:
  std::vector<std::pair<int, std::unique_ptr<T>>> files_;
};

// The DirectFile of each file a load reads.
using DirectFiles = PerFile<DirectFile, &DirectFile::Open>;

// Reads [offset, offset + n) of `file` into `buffer` (kDirectAlign-aligned, at least
// DirectBufferBytes(n) bytes) by O_DIRECT preads of whole blocks on `direct` (DirectFile of
// `file`); returns where the bytes start in `buffer` (offset % kDirectAlign). A read that
// returns less than it asked and leaves the block grid (the end of the file, an injected short
// read) is finished by ReadExact on `file`. Errors as ReadExact's (kIo, the file, tensor and
// byte offset); the fault seam counts each direct pread as a read call. Thread-safe.
[[nodiscard]] base::Result<uint64_t> ReadDirect(const FileRef& file, const DirectFile& direct,
                                                uint64_t offset, uint64_t n,
                                                std::span<uint8_t> buffer,
                                                const ReadContext& context);

}  // namespace loadplan::backend
