// `loadplan check`: verify manifests and print every diagnostic.
#pragma once

#include <string>
#include <vector>

namespace loadplan::cli {

enum class Format { kText, kJson };

struct CheckOptions {
  std::vector<std::string> files;  // empty: the embedded default example (gpt-oss-120b)
  Format format = Format::kText;
};

// Exit code: 0 clean (warnings allowed), 1 verification errors, 2 a file that
// cannot be read or is not JSON (the worst over all files wins).
int RunCheck(const CheckOptions& options);

}  // namespace loadplan::cli
