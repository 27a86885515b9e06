// Reading manifests for the commands: size-limited files or the embedded default example.
#include "cli/input.h"

#include <filesystem>

#include <fmt/format.h>

#include "examples/examples.h"
#include "verifier/codes.h"
#include "verifier/manifest_file.h"

namespace loadplan::cli {

std::string DefaultExampleText() { return examples::ExampleText("gpt-oss-120b"); }

CheckedInput LoadAndCheck(const std::string& path, std::string text) {
  CheckedInput out;
  out.display_name = path.empty() ? kDefaultExampleName : path;
  const verifier::ParseLimits limits;
  if (!text.empty()) {
    // read already
  } else if (path.empty()) {
    text = DefaultExampleText();
  } else {
    base::Result<std::string> loaded = verifier::ReadManifestFile(path, limits.max_bytes);
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
