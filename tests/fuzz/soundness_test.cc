// Soundness: generated manifests verify with no diagnostic, their plans pass the plan
// checker, and the host backend runs them on real bytes (fuzz/properties.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/generators.h"
#include "fuzz/properties.h"
#include "fuzz/rc_defaults.h"

namespace loadplan::fuzz {
namespace {

RC_GTEST_PROP(Soundness, GeneratedManifestsVerifyWithoutDiagnostics, ()) {
  CheckVerifiesClean(*GenManifest());
}

RC_GTEST_PROP(Soundness, PlansOfGeneratedManifestsPassThePlanChecker, ()) {
  CheckPlanIsValid(*GenManifest());
}

RC_GTEST_PROP(Soundness, HostBackendReplaysGeneratedManifestsCleanly, ()) {
  CheckHostReplay(*GenManifest());
}

// The generator is not trivial: over a fixed sample it makes derive chains, variables,
// serving programs, `tensors` lists and every derive-related shape the properties rely on.
TEST(Soundness, GeneratorCoversTheManifestFeatures) {
  int derive_calls = 0, deep = 0, with_vars = 0, serving = 0, lanes = 0, lists = 0, parts = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const verifier::Manifest m = GenManifest()(rc::Random(seed), 60).value();
    int calls = 0;
    for (const verifier::Program& p : m.programs) {
      if (p.derive) calls += static_cast<int>(p.calls.size());
      serving += p.derive ? 0 : 1;
    }
    derive_calls += calls;
    deep += calls >= 8;
    with_vars += !m.vars.empty();
    lanes += m.load.lanes > 1;
    for (const verifier::Buffer& b : m.buffers) {
      lists += b.tensors.has_value();
      parts += b.tensors && b.tensors->size() > 1;  // a real concatenation, not one item
    }
  }
  EXPECT_GT(derive_calls, 400);
  EXPECT_GT(deep, 10);
  EXPECT_GT(with_vars, 100);
  EXPECT_GT(serving, 100);
  EXPECT_GT(lanes, 40);
  EXPECT_GT(lists, 40);
  EXPECT_GT(parts, 10);
}

}  // namespace
}  // namespace loadplan::fuzz
