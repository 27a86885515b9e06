// The error messages of a failed checkpoint read (file_read.cc), shared by the pread loop and
// the mapped gather (mapped_read.h): kIo carrying the file and errno, the tensor and the byte
// offset, worded "x.safetensors: tensor w: byte offset 4096 (file offset 4200): ...".
#pragma once

#include <cstdint>
#include <string>

#include "backend/checkpoint/file_read.h"
#include "base/status.h"

namespace loadplan::backend {

// "path: tensor T: byte offset B (file offset F)" for the byte `done` past `offset`.
std::string Where(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t offset);

// A failed read as an I/O error carrying its file and errno (0: the file ended) and its place:
// the tensor (empty: the header) and the byte offset in it, as Where says them.
base::Status ReadFailure(const FileRef& file, const ReadContext& c, uint64_t done,
                         std::string message, int error_number);

// The file ended `done` bytes into a read of `n` at `offset`: its size now and at open.
base::Status Ended(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t n,
                   uint64_t offset);

}  // namespace loadplan::backend
