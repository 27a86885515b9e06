// Totality: on any text (generated JSON values, byte-mutated example and generated
// manifests) CheckText returns, and every pointer it reports resolves in the document.
#include <cstdlib>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/generators.h"
#include "fuzz/properties.h"
#include "fuzz/rc_defaults.h"
#include "verifier/writer.h"

namespace loadplan::fuzz {
namespace {

const std::vector<std::string>& Seeds() {
  // $LOADPLAN_SOURCE_DIR (set by scripts/dev/properties-long) where the binary runs elsewhere.
  const char* dir = std::getenv("LOADPLAN_SOURCE_DIR");
  static const std::vector<std::string> kSeeds =
      SeedTexts(dir != nullptr ? dir : LOADPLAN_SOURCE_DIR);
  return kSeeds;
}

RC_GTEST_PROP(Totality, ArbitraryJsonValues, ()) { CheckTextIsTotal(*GenJsonText()); }

RC_GTEST_PROP(Totality, ByteMutatedExampleManifests, ()) {
  RC_PRE(!Seeds().empty());
  CheckTextIsTotal(*GenMutatedText(*rc::gen::elementOf(Seeds())));
}

RC_GTEST_PROP(Totality, ByteMutatedGeneratedManifests, ()) {
  CheckTextIsTotal(*GenMutatedText(verifier::WriteManifest(*GenManifest())));
}

TEST(Totality, SeedTextsAreFound) { EXPECT_GT(Seeds().size(), 20u); }

}  // namespace
}  // namespace loadplan::fuzz
