// Manifest JSON -> typed model. Strict: duplicate keys, unknown keys (with
// did-you-mean), wrong JSON types, bad names, bad expressions and unknown
// dtypes are diagnostics at their JSON pointer; limits on size and depth.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "verifier/diag.h"
#include "verifier/manifest.h"

namespace loadplan::verifier {

struct ParseLimits {
  size_t max_bytes = size_t{256} << 20;  // whole document
  int max_depth = 64;                    // JSON nesting
};

struct ParseOutput {
  // nullopt when the text is not JSON (syntax, encoding, limits): exit code 2.
  // Otherwise the model, where entities with problems have `malformed` set.
  std::optional<Manifest> manifest;
  std::vector<Diagnostic> diags;
};

ParseOutput ParseManifest(std::string_view text, const ParseLimits& limits = {});

}  // namespace loadplan::verifier
