// Reading manifests for the commands: size-limited files or the embedded default example.
#include "cli/input.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "examples/examples.h"
#include "verifier/codes.h"

namespace loadplan::cli {

namespace {

base::Status IoError(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo);
}

}  // namespace

base::Result<std::string> ReadFileLimited(const std::string& path, size_t limit) {
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

std::string DefaultExampleText() { return examples::ExampleText("gpt-oss-120b"); }

CheckedInput LoadAndCheck(const std::string& path) {
  CheckedInput out;
  out.display_name = path.empty() ? kDefaultExampleName : path;
  const verifier::ParseLimits limits;
  std::string text;
  if (path.empty()) {
    text = DefaultExampleText();
  } else {
    base::Result<std::string> loaded = ReadFileLimited(path, limits.max_bytes);
    if (!loaded.ok()) {
      out.read = loaded.status();
      return out;
    }
    text = std::move(*loaded);
  }
  out.check = verifier::CheckText(text, {}, limits);
  return out;
}

int ExitCodeOf(const CheckedInput& in) {
  if (!in.read.ok() || !in.check.parsed) return 2;
  return in.check.result.ok() ? 0 : 1;
}

std::vector<verifier::Diagnostic> DiagnosticsOf(const CheckedInput& in) {
  if (in.read.ok()) return in.check.result.diags;
  return {verifier::Diagnostic{.code = std::string(verifier::codes::kUnreadable),
                               .message = in.read.message()}};
}

}  // namespace loadplan::cli
