// Reading manifests for the commands: files with a size limit, or the embedded default example.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "verifier/parse.h"
#include "verifier/verify.h"

namespace loadplan::cli {

inline constexpr const char* kDefaultExampleName = "<embedded gpt-oss-120b>";

// The text of the embedded default example (the gpt-oss-120b manifest, made by the builder).
std::string DefaultExampleText();

// Reads (or embeds, for an empty path) and checks one manifest.
struct CheckedInput {
  std::string display_name;
  base::Status read;  // an error: unreadable (exit 2), `check` empty
  verifier::CheckOutput check;
};
// `text`: the file's text when the caller already read it (api::ResolveSource), checked as is.
[[nodiscard]] CheckedInput LoadAndCheck(const std::string& path, std::string text = {});

// `check`'s exit code for one input: 2 unreadable or not JSON, 1 verification errors, 0 clean.
[[nodiscard]] int ExitCodeOf(const CheckedInput& in);

// Its diagnostics; for an unreadable input, the one J3 (verifier/codes.h) naming the reason.
std::vector<verifier::Diagnostic> DiagnosticsOf(const CheckedInput& in);

}  // namespace loadplan::cli
