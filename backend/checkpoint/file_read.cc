// ReadExact: the pread loop, its fault seam and its error messages.
#include "backend/checkpoint/file_read.h"

#include "backend/checkpoint/read_errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

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

// One read call of a loop, retried on EINTR: with the seam's eintr_every, each call is first
// interrupted once (EINTR delivered, not counted as a read), then made. Sets errno on -1.
class ReadCalls {
 public:
  explicit ReadCalls(const ReadContext& c)
      : context_(c), eintr_(c.faults != nullptr && c.faults->faults().eintr_every) {}
  ssize_t Next(int fd, uint8_t* out, uint64_t n, uint64_t offset) {
    while (true) {
      ssize_t r = -1;
      if (eintr_ && !interrupted_) {
        interrupted_ = true;
        errno = EINTR;
      } else {
        interrupted_ = false;
        r = Pread(fd, out, n, offset, context_.faults);
      }
      if (r >= 0 || errno != EINTR) return r;
    }
  }

 private:
  const ReadContext& context_;
  const bool eintr_;
  bool interrupted_ = false;  // the injected EINTR of this call was delivered
};

}  // namespace

std::string Where(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t offset) {
  return fmt::format("{}: {}: byte offset {} (file offset {})", file.path,
                     c.tensor.empty() ? std::string("header") : fmt::format("tensor {}", c.tensor),
                     c.tensor_offset + done, offset + done);
}

// A failed read as an I/O error carrying its file and errno (0: the file ended) and its place:
// the tensor (empty: the header) and the byte offset in it, as Where says them.
base::Status ReadFailure(const FileRef& file, const ReadContext& c, uint64_t done,
                         std::string message, int error_number) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo)
      .WithFile(std::string(file.path), error_number)
      .WithPlace(std::string(c.tensor), c.tensor_offset + done);
}

base::Status Ended(const FileRef& file, const ReadContext& c, uint64_t done, uint64_t n,
                   uint64_t offset) {
  struct stat st {};
  const std::string now = ::fstat(file.fd, &st) == 0
                              ? fmt::format("{} bytes", static_cast<uint64_t>(st.st_size))
                              : fmt::format("of unknown size ({})", std::strerror(errno));
  return ReadFailure(
      file, c, done,
      fmt::format("{}: the file ended after {} of {} bytes: it is {} now, was {} when opened",
                  Where(file, c, done, offset), done, n, now, file.size_at_open),
      0);
}

base::Status ReadExact(const FileRef& file, uint64_t offset, std::span<uint8_t> out,
                       const ReadContext& context) {
  ReadCalls calls(context);
  uint64_t done = 0;
  while (done < out.size()) {
    const ssize_t n = calls.Next(file.fd, out.data() + done, out.size() - done, offset + done);
    if (n < 0) {
      const int error_number = errno;
      return ReadFailure(file, context, done,
                         fmt::format("{}: read failed: {}", Where(file, context, done, offset),
                                     std::strerror(error_number)),
                         error_number);
    }
    if (n == 0) return Ended(file, context, done, out.size(), offset);
    done += static_cast<uint64_t>(n);
  }
  return base::Status::Ok();
}

uint64_t DirectBufferBytes(uint64_t bytes) {
  const uint64_t blocks = (bytes + kDirectAlign - 1) / kDirectAlign;
  return (blocks + 1) * kDirectAlign;  // one more: the skew can push the end into a next block
}

base::Result<DirectFile> DirectFile::Open(const FileRef& file) {
  const std::string proc = fmt::format("/proc/self/fd/{}", file.fd);
  const int fd = ::open(proc.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    return base::Status::Error(fmt::format("{}: cannot open for direct reads (O_DIRECT): {}",
                                           file.path, std::strerror(errno)),
                               base::ErrorKind::kIo);
  }
  DirectFile direct(fd);
  struct stat a {
  }, b{};
  if (::fstat(file.fd, &a) != 0 || ::fstat(fd, &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino) {
    return base::Status::Error(
        fmt::format("{}: the direct-read descriptor is not the opened file", file.path),
        base::ErrorKind::kIo);
  }
  return direct;
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

base::Result<uint64_t> ReadDirect(const FileRef& file, const DirectFile& direct, uint64_t offset,
                                  uint64_t n, std::span<uint8_t> buffer,
                                  const ReadContext& context) {
  const uint64_t skew = offset % kDirectAlign, start = offset - skew, need = skew + n;
  const uint64_t want = (need + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
  if (buffer.size() < want || reinterpret_cast<uintptr_t>(buffer.data()) % kDirectAlign != 0) {
    return base::Status::Error(
        fmt::format("{}: a direct read of {} bytes needs a {}-aligned buffer of {} bytes",
                    file.path, n, kDirectAlign, want),
        base::ErrorKind::kInternal);
  }
  ReadCalls calls(context);
  uint64_t done = 0;  // bytes of buffer filled, from `start`
  while (done < need) {
    const ssize_t r = calls.Next(direct.fd(), buffer.data() + done, want - done, start + done);
    const uint64_t got = done > skew ? done - skew : 0;  // of the bytes asked, so far
    if (r < 0) {
      const int error_number = errno;
      return ReadFailure(
          file, context, got,
          fmt::format("{}: direct read failed: {}", Where(file, context, got, offset),
                      std::strerror(error_number)),
          error_number);
    }
    if (r == 0) return Ended(file, context, got, n, offset);
    done += static_cast<uint64_t>(r);
    if (done < need && done % kDirectAlign != 0) {
      // Off the block grid: the rest through the page cache (ReadExact's retries and errors).
      const uint64_t from = done > skew ? done - skew : 0;
      ReadContext rest = context;
      rest.tensor_offset += from;
      if (base::Status st =
              ReadExact(file, offset + from, buffer.subspan(skew + from, n - from), rest);
          !st.ok()) {
        return st;
      }
      done = need;
    }
  }
  return skew;
}

}  // namespace loadplan::backend
