// Test helpers: verify a manifest the test expects to be valid, and plan it (Plan takes only a
// verifier::VerifiedManifest). A manifest with errors throws, which fails the test with the
// diagnostics as the message.
#pragma once

#include <stdexcept>
#include <utility>

#include "simulator/planner/planner.h"
#include "verifier/diag.h"
#include "verifier/verify.h"

namespace loadplan::test_support {

inline verifier::VerifiedManifest MustVerify(const verifier::Manifest& m) {
  verifier::VerifyResult r = verifier::Verify(m);
  if (!r.verified)
    throw std::runtime_error("the test's manifest does not verify:\n" +
                             verifier::FormatText(r.diags, m.name));
  return std::move(*r.verified);
}

inline simulator::LoadPlan PlanOf(const verifier::Manifest& m,
                                  const simulator::PlanOptions& options = {}) {
  return simulator::Plan(MustVerify(m), options);
}

}  // namespace loadplan::test_support
