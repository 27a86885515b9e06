// Round trip: parse(write(m)) == m on generated manifests and on model-level mutations.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fuzz/generators.h"
#include "fuzz/properties.h"
#include "fuzz/rc_defaults.h"

namespace loadplan::fuzz {
namespace {

RC_GTEST_PROP(RoundTrip, ParseOfWriteIsTheIdentityOnGeneratedManifests, ()) {
  CheckRoundTrip(*GenManifest());
}

RC_GTEST_PROP(RoundTrip, WriteOfParseIsTheIdentityOnMutatedModels, ()) {
  CheckMutationRoundTrip(*GenManifest());
}

}  // namespace
}  // namespace loadplan::fuzz
