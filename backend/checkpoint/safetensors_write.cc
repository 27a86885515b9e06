// safetensors writer: header + streamed tensor data, atomically renamed into place.
#include "backend/checkpoint/safetensors_write.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace loadplan::backend {

std::optional<uint64_t> TensorBytes(const TensorSpec& t) {
  uint64_t bits = base::DtypeBits(t.dtype);
  for (uint64_t d : t.shape) {
    if (__builtin_mul_overflow(bits, d, &bits)) return std::nullopt;
  }
  if (bits % 8 != 0) return std::nullopt;
  return bits / 8;
}

std::string SafetensorsHeader(const std::vector<TensorSpec>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const TensorSpec& t : tensors) {
    const uint64_t bytes = TensorBytes(t).value_or(0);
    h[t.name] = {{"dtype", base::DtypeName(t.dtype)},
                 {"shape", t.shape},
                 {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

base::Status WriteSafetensors(const std::string& path, const std::vector<TensorSpec>& tensors,
                              const std::map<std::string, std::string>& metadata,
                              const FillFn& fill) {
  for (const TensorSpec& t : tensors) {
    if (!TensorBytes(t)) {
      return base::Status::Error(
          fmt::format("tensor '{}': shape x dtype is not a whole byte count in 64 bits", t.name));
    }
  }
  const std::string tmp = path + ".tmp";
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!f)
    return base::Status::Error(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)),
                               base::ErrorKind::kIo);
  const std::string header = SafetensorsHeader(tensors, metadata);
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  bool ok = std::fwrite(len, 1, 8, f.get()) == 8 &&
            std::fwrite(header.data(), 1, header.size(), f.get()) == header.size();
  std::vector<uint8_t> buf(size_t{8} << 20);
  for (size_t i = 0; ok && i < tensors.size(); ++i) {
    const uint64_t bytes = *TensorBytes(tensors[i]);
    for (uint64_t off = 0; ok && off < bytes; off += buf.size()) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), bytes - off));
      fill(i, off, std::span<uint8_t>(buf.data(), n));
      ok = std::fwrite(buf.data(), 1, n, f.get()) == n;
    }
  }
  const int err = errno;
  ok = (std::fclose(f.release()) == 0) && ok;
  // The partial file goes; if it cannot, the error says so (a cleanup error is never dropped).
  const auto discard = [&tmp] {
    return std::remove(tmp.c_str()) == 0
               ? std::string()
               : fmt::format("; cannot remove {}: {}", tmp, std::strerror(errno));
  };
  if (!ok) {
    std::string message = fmt::format("{}: write failed: {}", tmp, std::strerror(err));
    return base::Status::Error(message + discard(), base::ErrorKind::kIo);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string message =
        fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno));
    return base::Status::Error(message + discard(), base::ErrorKind::kIo);
  }
  return base::Status::Ok();
}

}  // namespace loadplan::backend
