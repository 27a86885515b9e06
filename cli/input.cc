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

LoadedText ReadFileLimited(const std::string& path, size_t limit) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return {std::nullopt, fmt::format("cannot open {}: {}", path, ec.message())};
  if (!std::filesystem::is_regular_file(status)) {
    return {std::nullopt, fmt::format("cannot read {}: not a regular file", path)};
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return {std::nullopt, fmt::format("cannot read {}: {}", path, ec.message())};
  if (size > limit) {
    return {std::nullopt, fmt::format("{} is {} bytes, over the {} byte manifest limit", path, size, limit)};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return {std::nullopt, fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return {std::nullopt, fmt::format("cannot read {}: I/O error", path)};
  return {ss.str(), {}};
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
    LoadedText loaded = ReadFileLimited(path, limits.max_bytes);
    if (!loaded.text) {
      out.read_error = loaded.error;
      return out;
    }
    text = std::move(*loaded.text);
  }
  out.check = verifier::CheckText(text, {}, limits);
  return out;
}

std::vector<verifier::Diagnostic> DiagnosticsOf(const CheckedInput& in) {
  if (in.read_error.empty()) return in.check.result.diags;
  return {verifier::Diagnostic{.code = std::string(verifier::codes::kUnreadable), .message = in.read_error}};
}

}  // namespace loadplan::cli
