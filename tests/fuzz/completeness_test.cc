// Completeness: every mutation of a generated manifest is reported with its rule code at
// its pointer, and with no error that the mutation does not explain.
#include <map>
#include <random>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/generators.h"
#include "fuzz/mutators.h"
#include "fuzz/properties.h"
#include "fuzz/rc_defaults.h"

namespace loadplan::fuzz {
namespace {

RC_GTEST_PROP(Completeness, EveryMutationIsReportedWithItsCodeAtItsPointer, ()) {
  CheckMutationIsReported(*GenManifest());
}

// Deterministic coverage: over a fixed sample of generated manifests, every mutator applies
// at least once, and each of its mutations is reported as expected.
TEST(Completeness, EveryMutatorAppliesAndIsReported) {
  std::map<std::string, int> applied;
  std::mt19937_64 rng(7);
  const Pick pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const verifier::Manifest m = GenManifest()(rc::Random(seed), 60).value();
    for (const Mutator& mutator : Mutators()) {
      const std::optional<Mutation> mu = mutator.apply(m, pick);
      if (!mu) continue;
      ++applied[std::string(mutator.name)];
      ASSERT_FALSE(mu->expected.empty()) << mutator.name;
      EXPECT_EQ(mu->expected.front().code, mutator.code) << mutator.name;
      EXPECT_EQ(CheckMutation(*mu), "") << "seed " << seed << "\n" << mu->text;
    }
  }
  for (const Mutator& mutator : Mutators())
    EXPECT_GT(applied[std::string(mutator.name)], 0) << mutator.name;
}

// The check can fail: a mutation that claims another code or pointer is caught.
TEST(Completeness, CheckMutationRejectsAWrongClaim) {
  const verifier::Manifest m = GenManifest()(rc::Random(3), 30).value();
  std::mt19937_64 rng(1);
  std::optional<Mutation> mu =
      Mutators().front().apply(m, [&](size_t n) { return static_cast<size_t>(rng() % n); });
  ASSERT_TRUE(mu.has_value());
  EXPECT_EQ(CheckMutation(*mu), "");
  mu->expected = {{"J1", "/nowhere"}};
  EXPECT_NE(CheckMutation(*mu), "");
}

}  // namespace
}  // namespace loadplan::fuzz
