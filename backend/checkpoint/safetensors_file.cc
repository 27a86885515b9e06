// SafetensorsFile: open and validate (the header read with pread), read tensors, and tell
// whether the file changed underneath since it was opened.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "backend/checkpoint/safetensors.h"
#include "base/input_file.h"

namespace loadplan::backend {
namespace {

base::Status Invalid(std::string message) { return base::Status::Error(std::move(message)); }
base::Status Io(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo);
}

FileIdentity IdentityOf(const struct stat& st) {
  return {.device = static_cast<uint64_t>(st.st_dev),
          .inode = static_cast<uint64_t>(st.st_ino),
          .size = static_cast<uint64_t>(st.st_size),
          .mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                      static_cast<int64_t>(st.st_mtim.tv_nsec)};
}

// "1733160000.123456789 s" (since the epoch).
std::string FormatTime(int64_t ns) {
  return fmt::format("{}.{:09} s", ns / 1'000'000'000, ns % 1'000'000'000);
}

// The 8-byte little-endian header length.
base::Result<uint64_t> ReadHeaderLength(const FileRef& file) {
  uint8_t bytes[8] = {};
  if (base::Status st = ReadExact(file, 0, bytes, {}); !st.ok()) return st;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];
  return n;
}

}  // namespace

base::Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());  // closes the fd on every return
  f->path_ = path;
  base::Result<int> fd = base::OpenRegularFile(path);  // a FIFO or device: refused, never read
  if (!fd.ok()) return fd.status();
  f->fd_ = *fd;
  struct stat st {};
  if (::fstat(f->fd_, &st) != 0)
    return Io(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  f->identity_ = IdentityOf(st);
  const uint64_t size = f->identity_.size;
  if (size < 8) {
    return Invalid(
        fmt::format("{}: {} bytes is shorter than the 8-byte header length", path, size));
  }
  const base::Result<uint64_t> length = ReadHeaderLength(f->Ref());
  if (!length.ok()) return length.status();
  const uint64_t n = *length;
  if (n > kMaxHeaderBytes)
    return Invalid(
        fmt::format("{}: header length {} is over the {} byte limit", path, n, kMaxHeaderBytes));
  if (n > size - 8)
    return Invalid(
        fmt::format("{}: header length {} runs past the end of the {} byte file", path, n, size));
  f->data_offset_ = 8 + n;
  std::string header(n, '\0');
  if (base::Status st =
          ReadExact(f->Ref(), 8, {reinterpret_cast<uint8_t*>(header.data()), header.size()}, {});
      !st.ok()) {
    return st;
  }
  base::Result<ParsedHeader> h = ParseSafetensorsHeader(header, size - 8 - n);
  if (!h.ok()) return h.status().WithContext(path);
  f->tensors_ = std::move(h->tensors);
  f->metadata_ = std::move(h->metadata);
  f->by_name_.resize(f->tensors_.size());
  for (size_t i = 0; i < f->tensors_.size(); ++i) f->by_name_[i] = static_cast<uint32_t>(i);
  std::sort(f->by_name_.begin(), f->by_name_.end(),
            [&t = f->tensors_](uint32_t a, uint32_t b) { return t[a].name < t[b].name; });
  return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept { *this = std::move(o); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    identity_ = o.identity_;
    data_offset_ = o.data_offset_;
    tensors_ = std::move(o.tensors_);
    metadata_ = std::move(o.metadata_);
    by_name_ = std::move(o.by_name_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  const auto it =
      std::lower_bound(by_name_.begin(), by_name_.end(), name,
                       [this](uint32_t i, std::string_view n) { return tensors_[i].name < n; });
  return it != by_name_.end() && tensors_[*it].name == name ? &tensors_[*it] : nullptr;
}

base::Status SafetensorsFile::Read(const TensorInfo& t, uint64_t offset_in_tensor,
                                   std::span<uint8_t> out, IoFaultState* faults) const {
  if (offset_in_tensor > t.bytes() || out.size() > t.bytes() - offset_in_tensor) {
    return base::Status::Error(
        fmt::format("{}: tensor {}: a read of [{}, +{}) is outside its {} bytes", path_, t.name,
                    offset_in_tensor, out.size(), t.bytes()),
        base::ErrorKind::kInternal);
  }
  return ReadExact(Ref(), FileOffset(t) + offset_in_tensor, out,
                   {.tensor = t.name, .tensor_offset = offset_in_tensor, .faults = faults});
}

base::Result<std::vector<uint8_t>> SafetensorsFile::ReadAll(const TensorInfo& t) const {
  std::vector<uint8_t> out(t.bytes());
  if (base::Status st = Read(t, 0, out); !st.ok()) return st;
  return out;
}

base::Status SafetensorsFile::CheckUnchanged() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0)
    return Io(fmt::format("{}: cannot stat the open file: {}", path_, std::strerror(errno)));
  const FileIdentity now = IdentityOf(st);
  if (now.size != identity_.size) {
    return Io(fmt::format("{}: changed since it was opened: it is {} bytes now, was {}", path_,
                          now.size, identity_.size));
  }
  if (now.mtime_ns != identity_.mtime_ns) {
    return Io(fmt::format("{}: changed since it was opened: modified at {} now, was {}", path_,
                          FormatTime(now.mtime_ns), FormatTime(identity_.mtime_ns)));
  }
  struct stat at {};
  if (::stat(path_.c_str(), &at) != 0) {
    if (errno == ENOENT) return Io(fmt::format("{}: deleted since it was opened", path_));
    return Io(fmt::format("{}: cannot stat: {}", path_, std::strerror(errno)));
  }
  if (at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
    return Io(fmt::format(
        "{}: replaced since it was opened: the path names inode {} now, the open file is {}", path_,
        static_cast<uint64_t>(at.st_ino), identity_.inode));
  }
  return base::Status::Ok();
}

}  // namespace loadplan::backend
