// Opening inputs: non-blocking open, fstat, then read with a size limit checked first.
#include "base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace loadplan::base {
namespace {

// An input that cannot be opened or read: kIo carrying the path and the errno (0: refused by
// loadplan, not the system).
Status IoError(std::string message, const std::string& path, int error_number) {
  return Status::Error(std::move(message), ErrorKind::kIo).WithFile(path, error_number);
}

Status SystemError(const char* what, const std::string& path) {
  const int e = errno;
  return IoError(fmt::format("{} {}: {}", what, path, std::strerror(e)), path, e);
}

// "a FIFO, " for the kinds people meet; "" for the rest.
std::string_view KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory, ";
  if (S_ISFIFO(mode)) return "a FIFO, ";
  if (S_ISCHR(mode)) return "a character device, ";
  if (S_ISBLK(mode)) return "a block device, ";
  if (S_ISSOCK(mode)) return "a socket, ";
  return "";
}

// Closes the descriptor unless released.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int Release() { return std::exchange(fd, -1); }
};

// The regular file at `path`, blocking again, and its size; `f` owns the descriptor.
Result<uint64_t> Open(const std::string& path, Fd& f) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO opens at once
  if (f.fd < 0) return SystemError("cannot open", path);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return SystemError("cannot read", path);
  if (!S_ISREG(st.st_mode))
    return IoError(fmt::format("cannot read {}: {}not a regular file", path, KindOf(st.st_mode)),
                   path, 0);
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags < 0 || ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return SystemError("cannot open", path);
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace

Result<int> OpenRegularFile(const std::string& path) {
  Fd f;
  if (Result<uint64_t> size = Open(path, f); !size.ok()) return size.status();
  return f.Release();
}

Result<std::string> ReadInputFile(const std::string& path, uint64_t limit, std::string_view what) {
  Fd f;
  const Result<uint64_t> opened = Open(path, f);
  if (!opened.ok()) return opened.status();
  const uint64_t size = *opened;
  if (size > limit) {
    return IoError(
        fmt::format("{} is {} bytes, over the {} byte {} limit", path, size, limit, what), path, 0);
  }
  std::string text(size, '\0');
  uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(f.fd, text.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError("cannot read", path);
    if (n == 0) break;  // shrank underneath: what is there
    done += static_cast<uint64_t>(n);
  }
  text.resize(done);  // a file that grows while read is read to its size at the open
  return text;
}

}  // namespace loadplan::base
