// Gathering a strided slice's runs through a read-only mapping of the file (issue 30): the file
// mapped once, then each run copied out with memcpy, its pages faulting in as the copy touches
// them (a fault maps the cached pages around it too). No system call per run, and no copy of
// the bytes between runs: the page cache's pages are read in place. A file cut short, or a page
// that cannot be read, raises SIGBUS during the copy; a guard around the copy turns it into the
// kIo error a pread gives ("the file ended" when the file is now shorter than the runs' span,
// else a read failure, EIO); a SIGBUS outside a guarded copy goes to the handler that was there
// before.
#pragma once

#include <cstdint>
#include <memory>

#include "backend/checkpoint/file_read.h"
#include "base/status.h"

namespace loadplan::backend {

// The runs' layout: `count` runs of `run_bytes`, `stride` bytes apart, from file offset
// `offset` (the first run's), copied one after another to `out` (count x run_bytes bytes).
struct MappedRuns {
  uint64_t offset = 0;
  uint64_t run_bytes = 0;
  uint64_t stride = 0;
  uint64_t count = 0;
};

// A read-only shared mapping of a whole file, kept for a load: each gather copies its runs,
// their pages faulting in, with no mapping call per chunk (a mapping and an unmapping each take
// the process's memory-map lock for writing, which makes reading threads take turns).
// Page tables grow with the pages gathered (8 bytes a 4 KiB page) until it is dropped.
class FileMapping {
 public:
  // The file as it is now (its size at this call); kIo naming the file when refused.
  static base::Result<std::unique_ptr<FileMapping>> Map(const FileRef& file);
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  // Copies the runs of `r` out of `file` (the one mapped). Errors as ReadExact's (kIo naming
  // the file, the tensor and the byte offset, context.tensor_offset being the first run's): the
  // file ended before the last run (its size now and at open), or a SIGBUS stopped the copy
  // (the file cut short under it, or a page unreadable: EIO). The fault seam counts one read call
  // per gather (eio_at_read, eof_at_read). Thread-safe.
  [[nodiscard]] base::Status Gather(const FileRef& file, const MappedRuns& r, uint8_t* out,
                                    const ReadContext& context) const;

 private:
  FileMapping(const char* base, uint64_t bytes) : base_(base), bytes_(bytes) {}
  const char* base_;
  uint64_t bytes_;
};

// The FileMapping of each file a load gathers from (PerFile: mapped at its first use).
using FileMappings = PerFile<FileMapping, &FileMapping::Map>;

// The guard on its own, for tests: runs copy(), turning a SIGBUS at an address in
// [begin, end) during it into false (the copy stopped part way); true when it finished.
bool GuardedCopy(const void* begin, const void* end, void (*copy)(void*), void* arg);

}  // namespace loadplan::backend
