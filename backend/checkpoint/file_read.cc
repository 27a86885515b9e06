// ReadExact: the pread loop, its fault seam and its error messages.
#include "backend/checkpoint/file_read.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace loadplan::backend {
namespace {

// One pread, or the fault injected in its place. Sets errno on -1.
ssize_t Pread(int fd, uint8_t* out, uint64_t n, uint64_t offset, IoFaultState* state) {
  if (state == nullptr || !state->faults().any()) {
    return ::pread(fd, out, n, static_cast<off_t>(offset));
  }
  const IoFaults& f = state->faults();
  const uint64_t k = state->NextRead();
  if (f.eio_at_read && *f.eio_at_read == k) {
    errno = EIO;
    return -1;
  }
  if (f.eof_at_read && k >= *f.eof_at_read) return 0;
  if (f.short_at_read && *f.short_at_read == k && n > 1) n /= 2;
  return ::pread(fd, out, n, static_cast<off_t>(offset));
}

std::string Where(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t offset) {
  return fmt::format("{}: {}: byte offset {} (file offset {})", file.path,
                     c.tensor.empty() ? std::string("header") : fmt::format("tensor {}", c.tensor),
                     c.tensor_offset + done, offset + done);
}

base::Status Ended(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t n,
                   uint64_t offset) {
  struct stat st {};
  const std::string now = ::fstat(file.fd, &st) == 0
                              ? fmt::format("{} bytes", static_cast<uint64_t>(st.st_size))
                              : fmt::format("of unknown size ({})", std::strerror(errno));
  return base::Status::Error(
      fmt::format("{}: the file ended after {} of {} bytes: it is {} now, was {} when opened",
                  Where(file, c, done, offset), done, n, now, file.size_at_open),
      base::ErrorKind::kIo);
}

}  // namespace

base::Status ReadExact(const FileRef& file, uint64_t offset, std::span<uint8_t> out,
                       const ReadContext& context) {
  const bool eintr = context.faults != nullptr && context.faults->faults().eintr_every;
  bool interrupted = false;  // the injected EINTR of this call was delivered
  uint64_t done = 0;
  while (done < out.size()) {
    ssize_t n = -1;
    if (eintr && !interrupted) {
      interrupted = true;
      errno = EINTR;
    } else {
      interrupted = false;
      n = Pread(file.fd, out.data() + done, out.size() - done, offset + done, context.faults);
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return base::Status::Error(
          fmt::format("{}: read failed: {}", Where(file, context, done, offset),
                      std::strerror(errno)),
          base::ErrorKind::kIo);
    }
    if (n == 0) return Ended(file, context, done, out.size(), offset);
    done += static_cast<uint64_t>(n);
  }
  return base::Status::Ok();
}

}  // namespace loadplan::backend
