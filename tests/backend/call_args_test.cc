// backend::CheckContracts, the run-time refusal: a plan of a verified manifest whose kernels
// are the registry's passes (rule P9 already refused any other declaration at check time), and
// a plan whose calls do not bind a registry kernel's contract exactly is refused, naming the
// call; BindCall binds from the plan alone.
#include "backend/call_args.h"

#include <gtest/gtest.h>

#include "base/status_lines.h"
#include "examples/examples.h"
#include "kernels/registry/registry.h"
#include "tests/verified_plan.h"
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
  const simulator::LoadPlan plan = test_support::PlanOf(TinyManifest());
  ASSERT_FALSE(plan.calls.empty());
  for (const simulator::PlannedCall& c : plan.calls) {
    ASSERT_TRUE(c.kernel_id) << c.kernel;
    EXPECT_EQ(kernels::KernelName(*c.kernel_id), c.kernel);
  }
  EXPECT_TRUE(CheckContracts(plan).ok());
}

TEST(CheckContracts, ADifferentDeclarationIsRuleP9AtCheckTime) {
  verifier::Manifest m = TinyManifest();
  for (verifier::Kernel& k : m.kernels) {
    for (verifier::Param& p : k.params) {
      if (k.name == "mxfp4_dequant" && p.name == "dst")
        p.extent = *p.extent * verifier::Expr::Const(1);
    }
  }
  const verifier::VerifyResult v = verifier::Verify(m);
  EXPECT_FALSE(v.verified);  // so no plan of it exists for a backend to refuse
  ASSERT_FALSE(v.diags.empty());
  EXPECT_EQ(v.diags[0].code, verifier::codes::kRegistryContract);
  EXPECT_EQ(v.diags[0].pointer, "/kernels/mxfp4_dequant/params/dst/extent");
}

TEST(CheckContracts, RefusesACallThatDoesNotBindTheRegistryContract) {
  simulator::LoadPlan plan = test_support::PlanOf(TinyManifest());
  simulator::PlannedCall& c = plan.calls.front();
  ASSERT_FALSE(c.args.empty());
  *c.args.front().bytes += 1;  // more bytes than the registry's extent gives
  std::vector<std::string> errors = base::StatusLines(CheckContracts(plan));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find(c.ptr), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find(c.args.front().param), std::string::npos) << errors[0];
  *c.args.front().bytes -= 1;
  c.kernel_id.reset();  // a kernel the backends do not implement
  errors = base::StatusLines(CheckContracts(plan));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("not implemented by this backend"), std::string::npos) << errors[0];
}

TEST(BindCall, BindsScalarsAndBuffersFromThePlan) {
  const simulator::LoadPlan plan = test_support::PlanOf(TinyManifest());
  const simulator::PlannedCall& c = plan.calls.front();
  std::vector<uint8_t> memory(1 << 20);
  const auto bound = BindCall(plan, c, [&](simulator::BufferId) { return memory.data(); });
  ASSERT_TRUE(bound.ok()) << bound.status().message();
  EXPECT_EQ(bound->scalars.size(), c.scalars.size());
  EXPECT_EQ(bound->buffers.size(), c.args.size());
  const auto unheld = BindCall(plan, c, [](simulator::BufferId) { return nullptr; });
  EXPECT_FALSE(unheld.ok());
}

}  // namespace
}  // namespace loadplan::backend
