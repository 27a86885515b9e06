// Reading checkpoint bytes with pread: exact reads that survive short reads and EINTR, and
// errors that name the file, the tensor and the byte offset. A test seam (IoFaults) injects
// EIO, short reads, EOF and EINTR at a chosen read call; it is never a user-facing option.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/status.h"

namespace loadplan::backend {

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

}  // namespace loadplan::backend
