// Reading manifests for the commands: files with a size limit, or the embedded default example.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "verifier/parse.h"
#include "verifier/verify.h"

namespace loadplan::cli {

inline constexpr const char* kDefaultExampleName = "<embedded gpt-oss-120b>";

struct LoadedText {
  std::optional<std::string> text;
  std::string error;  // "cannot open x.json: No such file or directory"
};

// Reads a whole file, refusing (with a message) files over `limit` bytes before reading them.
LoadedText ReadFileLimited(const std::string& path, size_t limit);

// The text of the embedded default example (the gpt-oss-120b manifest, made by the builder).
std::string DefaultExampleText();

// Reads (or embeds, for an empty path) and checks one manifest.
struct CheckedInput {
  std::string display_name;
  std::string read_error;  // non-empty: unreadable (exit 2)
  verifier::CheckOutput check;
};
CheckedInput LoadAndCheck(const std::string& path);

// Its diagnostics; for an unreadable input, the one J3 (verifier/codes.h) naming the reason.
std::vector<verifier::Diagnostic> DiagnosticsOf(const CheckedInput& in);

}  // namespace loadplan::cli
