// A file written whole or not at all: bytes go to a temporary name beside the target
// (DIR/.NAME.tmp-PID), are fsynced, and are renamed over the target only at Commit; any
// failure, or dropping the writer before Commit, removes the temporary and leaves a previous
// file at the target untouched. `--save-derived` writes through it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"

namespace loadplan::backend {

// Test-only fault seam (no CLI option sets it): the tests inject the errors a full, read-only
// or failing filesystem gives, at a chosen step, on a machine whose filesystem has none.
struct WriteFaults {
  uint32_t fail_write = 0;  // the 1-based Write call that fails with `error`; 0: none
  int error = ENOSPC;       // errno of that failing write
  int fail_create = 0;      // errno creating the temporary fails with (EACCES); 0: none
  int fail_rename = 0;      // errno the final rename fails with; 0: none
  std::string sink;         // write into this existing file instead (/dev/full); never committed
};

class AtomicFile {
 public:
  // Creates the temporary beside `path` (its folder must exist); kIo naming the temporary
  // and errno when it cannot.
  static base::Result<AtomicFile> Create(const std::string& path, const WriteFaults& faults = {});
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile();  // not committed: closes and removes the temporary

  // Appends every byte (retrying short writes); kIo naming the temporary, the byte offset and
  // errno ("No space left on device"). After an error only the destructor is left to call.
  [[nodiscard]] base::Status Write(std::span<const uint8_t> bytes);
  // fsync, close, rename over the target, fsync the folder. On an error the temporary is gone.
  [[nodiscard]] base::Status Commit();
  [[nodiscard]] const std::string& temp_path() const { return temp_; }

 private:
  AtomicFile(std::string path, std::string temp, int fd, int sink_fd, WriteFaults faults);
  [[nodiscard]] base::Status Fail(std::string message, int err);
  void Discard();

  std::string path_, temp_;
  int fd_ = -1;       // the temporary
  int sink_fd_ = -1;  // faults.sink, or -1
  uint64_t written_ = 0;
  uint32_t writes_ = 0;
  WriteFaults faults_;
};

}  // namespace loadplan::backend
