// Reading a manifest file whole, refusing one over the parse limit before reading it.
#include "verifier/manifest_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace loadplan::verifier {
namespace {

base::Status IoError(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo);
}

}  // namespace

base::Result<std::string> ReadManifestFile(const std::string& path, size_t limit) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return IoError(fmt::format("cannot open {}: {}", path, ec.message()));
  if (!std::filesystem::is_regular_file(status)) {
    return IoError(fmt::format("cannot read {}: not a regular file", path));
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return IoError(fmt::format("cannot read {}: {}", path, ec.message()));
  if (size > limit)
    return IoError(
        fmt::format("{} is {} bytes, over the {} byte manifest limit", path, size, limit));
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(fmt::format("cannot read {}: I/O error", path));
  return ss.str();
}

}  // namespace loadplan::verifier
