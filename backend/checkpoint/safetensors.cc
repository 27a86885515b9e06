// safetensors reader: header validation (the reference's rules, in its order) and mmap.
#include "backend/checkpoint/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "verifier/parse_json.h"

namespace loadplan::backend {
namespace {

base::Status Invalid(std::string message) { return base::Status::Error(std::move(message)); }
base::Status Io(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo);
}

using verifier::json::Kind;
using verifier::json::Node;

bool ValidUtf8(std::string_view s) {
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = c;
    if (c >= 0x80) {
      if ((c >> 5) == 6) {
        n = 1;
        cp = c & 0x1F;
      } else if ((c >> 4) == 14) {
        n = 2;
        cp = c & 0x0F;
      } else if ((c >> 3) == 30) {
        n = 3;
        cp = c & 0x07;
      } else
        return false;
      if (s.size() - i <= n) return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// Reads a non-negative integer (u64 in the reference: usize).
std::optional<uint64_t> Unsigned(const Node& n) {
  if (n.kind != Kind::kInt || n.integer < 0) return std::nullopt;
  return static_cast<uint64_t>(n.integer);
}

std::string ParseTensor(const std::string& name, const Node& v, TensorInfo& t) {
  if (v.kind != Kind::kObject) return fmt::format("tensor '{}': entry is not an object", name);
  t.name = name;
  const Node* dtype = v.Find("dtype");
  const Node* shape = v.Find("shape");
  const Node* offsets = v.Find("data_offsets");
  if (!dtype || !shape || !offsets) {
    return fmt::format("tensor '{}': missing {}", name,
                       !dtype   ? "dtype"
                       : !shape ? "shape"
                                : "data_offsets");
  }
  const auto d = dtype->kind == Kind::kString ? base::ParseDtype(dtype->text) : std::nullopt;
  if (!d)
    return fmt::format("tensor '{}': unknown dtype {}", name,
                       dtype->kind == Kind::kString ? dtype->text : "(not a string)");
  t.dtype = *d;
  if (shape->kind != Kind::kArray) return fmt::format("tensor '{}': shape is not an array", name);
  for (const Node& dim : shape->items) {
    const auto u = Unsigned(dim);
    if (!u)
      return fmt::format("tensor '{}': shape has a dimension that is not a non-negative integer",
                         name);
    t.shape.push_back(*u);
  }
  if (offsets->kind != Kind::kArray || offsets->items.size() != 2) {
    return fmt::format("tensor '{}': data_offsets is not [begin, end]", name);
  }
  const auto b = Unsigned(offsets->items[0]), e = Unsigned(offsets->items[1]);
  if (!b || !e) return fmt::format("tensor '{}': data_offsets are not non-negative integers", name);
  t.begin = *b;
  t.end = *e;
  return {};
}

std::string ParseMetadata(const Node& v, std::map<std::string, std::string>& out) {
  if (v.kind == Kind::kNull) return {};
  if (v.kind != Kind::kObject) return "__metadata__ is not an object of strings";
  for (const auto& [k, s] : v.members) {
    if (s.kind != Kind::kString)
      return fmt::format("__metadata__ value of '{}' is not a string", k);
    out[k] = s.text;
  }
  return {};
}

// The reference's validate(): sorted by offsets, tiling [0, end), sizes = shape x dtype.
std::string ValidateLayout(std::vector<TensorInfo>& tensors, uint64_t data_bytes) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t start = 0;
  for (const TensorInfo& t : tensors) {
    if (t.end < t.begin)
      return fmt::format("tensor '{}': data_offsets [{}, {}) end before they begin", t.name,
                         t.begin, t.end);
    if (t.begin != start) {
      return fmt::format(
          "tensor '{}': data_offsets begin at {} but the previous tensor ends at {} ({})", t.name,
          t.begin, start, t.begin > start ? "a gap" : "an overlap");
    }
    start = t.end;
    uint64_t bits = base::DtypeBits(t.dtype);
    for (uint64_t dim : t.shape) {
      if (__builtin_mul_overflow(bits, dim, &bits)) {
        return fmt::format("tensor '{}': shape x dtype overflows 64 bits", t.name);
      }
    }
    if (bits % 8 != 0) {
      return fmt::format("tensor '{}': {} elements of {} do not fill whole bytes", t.name,
                         bits / base::DtypeBits(t.dtype), base::DtypeName(t.dtype));
    }
    if (t.bytes() != bits / 8) {
      return fmt::format("tensor '{}': data_offsets hold {} bytes but shape x dtype needs {}",
                         t.name, t.bytes(), bits / 8);
    }
  }
  if (start != data_bytes) {
    return fmt::format("tensors end at byte {} of a {} byte data section ({})", start, data_bytes,
                       start < data_bytes ? "trailing bytes" : "missing bytes");
  }
  return {};
}

}  // namespace

base::Result<ParsedHeader> ParseSafetensorsHeader(std::string_view header, uint64_t data_bytes) {
  ParsedHeader r;
  if (!ValidUtf8(header)) return Invalid("header is not valid UTF-8");
  if (header.empty() || header.front() != '{') return Invalid("header does not start with '{'");
  verifier::DiagSink sink;
  verifier::ParseLimits limits{.max_bytes = kMaxHeaderBytes, .max_depth = 16};
  const std::optional<Node> doc = verifier::json::ReadJson(header, limits, sink);
  if (!doc || sink.HasErrors()) {
    const auto& d = sink.All();
    return Invalid(
        fmt::format("header is not the expected JSON: {}{}", d.empty() ? "" : d.front().message,
                    d.empty() || d.front().pointer.empty() ? "" : " at " + d.front().pointer));
  }
  if (doc->kind != Kind::kObject) return Invalid("header is not a JSON object");
  for (const auto& [name, value] : doc->members) {
    std::string err = name == "__metadata__" ? ParseMetadata(value, r.metadata)
                                             : ParseTensor(name, value, r.tensors.emplace_back());
    if (!err.empty()) return Invalid(err);
  }
  if (std::string err = ValidateLayout(r.tensors, data_bytes); !err.empty()) return Invalid(err);
  return r;
}

base::Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Io(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Io(fmt::format("{}: not a regular file", path));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    return Invalid(
        fmt::format("{}: {} bytes is shorter than the 8-byte header length", path, size));
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Io(fmt::format("{}: mmap failed: {}", path, std::strerror(errno)));
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  f->map_ = static_cast<const uint8_t*>(map);
  f->map_bytes_ = size;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | f->map_[i];
  if (n > kMaxHeaderBytes)
    return Invalid(
        fmt::format("{}: header length {} is over the {} byte limit", path, n, kMaxHeaderBytes));
  if (n > size - 8)
    return Invalid(
        fmt::format("{}: header length {} runs past the end of the {} byte file", path, n, size));
  f->data_offset_ = 8 + n;
  base::Result<ParsedHeader> h =
      ParseSafetensorsHeader({reinterpret_cast<const char*>(f->map_ + 8), n}, size - 8 - n);
  if (!h.ok()) return h.status().WithContext(path);
  f->tensors_ = std::move(h->tensors);
  f->metadata_ = std::move(h->metadata);
  for (size_t i = 0; i < f->tensors_.size(); ++i) f->index_.emplace(f->tensors_[i].name, i);
  return f;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept { *this = std::move(o); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
  if (this != &o) {
    if (map_) ::munmap(const_cast<uint8_t*>(map_), map_bytes_);
    path_ = std::move(o.path_);
    map_ = std::exchange(o.map_, nullptr);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
    data_offset_ = o.data_offset_;
    tensors_ = std::move(o.tensors_);
    metadata_ = std::move(o.metadata_);
    index_ = std::move(o.index_);
  }
  return *this;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<uint8_t*>(map_), map_bytes_);
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> SafetensorsFile::Data(const TensorInfo& t) const {
  return {map_ + data_offset_ + t.begin, t.bytes()};
}

}  // namespace loadplan::backend
