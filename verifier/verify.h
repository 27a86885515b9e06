// The verifier: runs every rule of docs/verifier.md over a parsed manifest and
// returns all diagnostics, sorted, in one pass.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verifier/diag.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"
#include "verifier/parse.h"

namespace loadplan::verifier {

struct VerifyOptions {
  ProofBudget budget;
};

struct VerifyResult {
  std::vector<Diagnostic> diags;          // sorted; parse diagnostics included by CheckText
  std::vector<std::string> derive_order;  // derive programs in dataflow order (when acyclic)
  [[nodiscard]] bool ok() const;          // no errors (warnings allowed)
};

VerifyResult Verify(const Manifest& m, const VerifyOptions& options = {});

struct CheckOutput {
  bool parsed = false;  // false: not JSON / over limits (exit 2)
  std::optional<Manifest> manifest;
  VerifyResult result;  // parse + rule diagnostics, sorted
};
CheckOutput CheckText(std::string_view text, const VerifyOptions& options = {},
                      const ParseLimits& limits = {});

}  // namespace loadplan::verifier
