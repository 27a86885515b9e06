// AtomicFile: temporary name, fsync, rename; the temporary never outlives a failure.
#include "backend/save_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

namespace loadplan::backend {
namespace {

using base::ErrorKind;
using base::Status;

std::string TempBeside(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string name = "." + p.filename().string() + fmt::format(".tmp-{}", ::getpid());
  return (p.parent_path() / name).string();
}

// The folder's own entry is durable only once the folder is fsynced (after the rename).
int SyncFolder(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

}  // namespace

base::Result<AtomicFile> AtomicFile::Create(const std::string& path, const WriteFaults& faults) {
  const std::string temp = TempBeside(path);
  const int fd = faults.fail_create != 0
                     ? (errno = faults.fail_create, -1)
                     : ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::Error(fmt::format("{}: cannot create: {}", temp, std::strerror(errno)),
                         ErrorKind::kIo);
  }
  int sink = -1;
  if (!faults.sink.empty()) sink = ::open(faults.sink.c_str(), O_WRONLY | O_CLOEXEC);
  if (!faults.sink.empty() && sink < 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Status::Error(fmt::format("{}: cannot open: {}", faults.sink, std::strerror(err)),
                         ErrorKind::kIo);
  }
  return AtomicFile(path, temp, fd, sink, faults);
}

AtomicFile::AtomicFile(std::string path, std::string temp, int fd, int sink_fd, WriteFaults faults)
    : path_(std::move(path)),
      temp_(std::move(temp)),
      fd_(fd),
      sink_fd_(sink_fd),
      faults_(std::move(faults)) {}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)),
      temp_(std::move(o.temp_)),
      fd_(std::exchange(o.fd_, -1)),
      sink_fd_(std::exchange(o.sink_fd_, -1)),
      written_(o.written_),
      writes_(o.writes_),
      faults_(std::move(o.faults_)) {}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (sink_fd_ >= 0) ::close(std::exchange(sink_fd_, -1));
  if (fd_ >= 0) {
    ::close(std::exchange(fd_, -1));
    ::unlink(temp_.c_str());
  }
}

Status AtomicFile::Fail(std::string message, int err) {
  message += fmt::format(": {}", std::strerror(err));
  const bool had_temp = fd_ >= 0;
  Discard();
  // A cleanup error is never dropped: the message says when the temporary stayed.
  if (had_temp && ::access(temp_.c_str(), F_OK) == 0)
    message += fmt::format("; cannot remove {}", temp_);
  return Status::Error(std::move(message), ErrorKind::kIo);
}

Status AtomicFile::Write(std::span<const uint8_t> bytes) {
  if (fd_ < 0) return Status::Error(temp_ + ": written after a failure", ErrorKind::kInternal);
  ++writes_;
  const int out = sink_fd_ >= 0 ? sink_fd_ : fd_;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = writes_ == faults_.fail_write
                          ? (errno = faults_.error, -1)
                          : ::write(out, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      return Fail(fmt::format("{}: write of {} bytes at byte {} failed", temp_, bytes.size() - done,
                              written_ + done),
                  err);
    }
    done += static_cast<size_t>(n);
  }
  written_ += done;
  return Status::Ok();
}

Status AtomicFile::Commit() {
  if (fd_ < 0) return Status::Error(temp_ + ": committed after a failure", ErrorKind::kInternal);
  if (sink_fd_ >= 0)  // the bytes went to the test's sink: an empty temporary never goes in place
    return Fail(fmt::format("{}: written to the sink {}, not committed", temp_, faults_.sink),
                EINVAL);
  if (::fsync(fd_) != 0) return Fail(fmt::format("{}: fsync failed", temp_), errno);
  if (::close(std::exchange(fd_, -1)) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    return Status::Error(fmt::format("{}: close failed: {}", temp_, std::strerror(err)),
                         ErrorKind::kIo);
  }
  const int rename_error = faults_.fail_rename != 0
                               ? faults_.fail_rename
                               : (std::rename(temp_.c_str(), path_.c_str()) == 0 ? 0 : errno);
  if (rename_error != 0) {
    ::unlink(temp_.c_str());
    return Status::Error(fmt::format("{}: cannot rename {} into place: {}", path_, temp_,
                                     std::strerror(rename_error)),
                         ErrorKind::kIo);
  }
  if (const int err = SyncFolder(path_); err != 0) {
    return Status::Error(
        fmt::format("{}: fsync of its folder failed: {}", path_, std::strerror(err)),
        ErrorKind::kIo);
  }
  return Status::Ok();
}

}  // namespace loadplan::backend
