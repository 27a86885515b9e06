// The verifier: runs every rule of docs/verifier.md over a parsed manifest and
// returns all diagnostics, sorted, in one pass.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
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

// A manifest that passed every rule without an error, in name order (vars, buffers, kernels,
// their params, programs, call args), with its derive order: what simulator::Plan takes, so
// "verified" is a type and not a comment. Only Verify and CheckText make one. The model is
// shared and immutable: copies are cheap, and CheckText's parsed model is the same object
// when the text was already in name order (no second copy of a large manifest).
class VerifiedManifest {
 public:
  [[nodiscard]] const Manifest& manifest() const { return *manifest_; }
  [[nodiscard]] const std::vector<std::string>& derive_order() const { return derive_order_; }

 private:
  friend struct VerifyAccess;
  VerifiedManifest(std::shared_ptr<const Manifest> m, std::vector<std::string> order)
      : manifest_(std::move(m)), derive_order_(std::move(order)) {}
  std::shared_ptr<const Manifest> manifest_;
  std::vector<std::string> derive_order_;
};

struct VerifyResult {
  std::vector<Diagnostic> diags;             // sorted; parse diagnostics included by CheckText
  std::vector<std::string> derive_order;     // derive programs in dataflow order (when acyclic)
  std::optional<VerifiedManifest> verified;  // set iff ok()
  [[nodiscard]] bool ok() const;             // no errors (warnings allowed)
};

// Runs every rule; the model may come in any order (a sorted copy is verified).
VerifyResult Verify(const Manifest& m, const VerifyOptions& options = {});
// The same, sharing `m` as the verified model when it is already in name order. Precondition: m.
VerifyResult Verify(std::shared_ptr<const Manifest> m, const VerifyOptions& options = {});

struct CheckOutput {
  bool parsed = false;                       // false: not JSON / over limits (exit 2)
  std::shared_ptr<const Manifest> manifest;  // as parsed (the text's order); null when not parsed
  VerifyResult result;                       // parse + rule diagnostics, sorted
};
CheckOutput CheckText(std::string_view text, const VerifyOptions& options = {},
                      const ParseLimits& limits = {});

}  // namespace loadplan::verifier
