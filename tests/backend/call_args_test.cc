// backend::CheckContracts, the run-time refusal, agrees with rule P9: the examples'
// kernels pass; a declaration that differs from the registry is refused at the same
// pointer that `check` reports.
#include "backend/call_args.h"

#include <gtest/gtest.h>

#include "examples/examples.h"
#include "simulator/planner.h"
#include "verifier/codes.h"
#include "verifier/verify.h"

namespace loadplan::backend {
namespace {

verifier::Manifest TinyManifest() {
  verifier::BuildResult r = examples::Tiny();
  EXPECT_TRUE(r.ok());
  return r.manifest;
}

TEST(CheckContracts, ExampleKernelsMatchTheRegistry) {
  const verifier::Manifest m = TinyManifest();
  EXPECT_TRUE(CheckContracts(m, simulator::Plan(m)).empty());
}

TEST(CheckContracts, RefusesWhatRuleP9Reports) {
  verifier::Manifest m = TinyManifest();
  const simulator::LoadPlan plan = simulator::Plan(m);
  verifier::Kernel* k = nullptr;
  for (verifier::Kernel& x : m.kernels) {
    if (x.name == "mxfp4_dequant") k = &x;
  }
  ASSERT_NE(k, nullptr);
  for (verifier::Param& p : k->params) {
    if (p.name == "dst") p.extent = *p.extent * verifier::Expr::Const(1);  // same value, another tree
  }
  const std::vector<std::string> errors = CheckContracts(m, plan);
  ASSERT_EQ(errors.size(), 1u);
  const std::string ptr = "/kernels/mxfp4_dequant/params/dst/extent";
  EXPECT_NE(errors[0].find(ptr), std::string::npos) << errors[0];
  const verifier::VerifyResult v = verifier::Verify(m);
  ASSERT_FALSE(v.diags.empty());
  EXPECT_EQ(v.diags[0].code, verifier::codes::kRegistryContract);
  EXPECT_EQ(v.diags[0].pointer, ptr);
}

}  // namespace
}  // namespace loadplan::backend
