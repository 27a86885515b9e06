// `loadplan kernels`: the listing names every registry kernel; a kernel's printed
// declaration parses back as the registry's contract and verifies clean (no P9).
#include "cli/cmd_kernels.h"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "kernels/registry/registry.h"
#include "verifier/registry_contract.h"
#include "verifier/verify.h"

namespace loadplan::cli {
namespace {

using nlohmann::json;

struct Ran {
  int code = 0;
  std::string out, err;
};

Ran RunCommand(const KernelsOptions& o) {
  std::ostringstream out, err;
  Ran r;
  r.code = RunKernels(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(KernelsCommand, ListsEveryRegistryKernelWithItsDoc) {
  const Ran text = RunCommand({});
  EXPECT_EQ(text.code, 0);
  const Ran js = RunCommand({.format = Format::kJson});
  const json list = json::parse(js.out);
  ASSERT_EQ(list.size(), kernels::Kernels().size());
  for (size_t i = 0; i < list.size(); ++i) {
    const kernels::KernelSpec& k = kernels::Kernels()[i];
    EXPECT_EQ(list[i]["name"], k.name);
    EXPECT_EQ(list[i]["doc"], k.doc);
    EXPECT_NE(text.out.find(k.name + " "), std::string::npos) << k.name;
    EXPECT_NE(text.out.find(k.doc), std::string::npos) << k.name;
  }
}

// The declaration is pasted into a manifest as is: it parses, matches the registry and
// verifies without a diagnostic.
TEST(KernelsCommand, PrintedDeclarationVerifiesAsTheRegistryContract) {
  for (const kernels::KernelSpec& k : kernels::Kernels()) {
    const Ran r = RunCommand({.name = k.name});
    ASSERT_EQ(r.code, 0) << r.err;
    json manifest = json::parse(r.out);
    ASSERT_EQ(manifest.size(), 1u) << r.out;  // only "kernels"
    manifest["schema"] = 1;
    manifest["name"] = "pasted";
    const verifier::CheckOutput out = verifier::CheckText(manifest.dump());
    ASSERT_TRUE(out.parsed && out.manifest) << k.name;
    EXPECT_TRUE(out.result.diags.empty()) << k.name << ": " << out.result.diags.front().code << " "
                                          << out.result.diags.front().message;
    ASSERT_EQ(out.manifest->kernels.size(), 1u);
    EXPECT_TRUE(verifier::CompareWithRegistry(out.manifest->kernels[0], k).empty()) << k.name;
  }
}

TEST(KernelsCommand, JsonOfOneKernelHasPreconditionsAndDeclaration) {
  const Ran r = RunCommand({.name = "mxfp4_fc1_weight", .format = Format::kJson});
  ASSERT_EQ(r.code, 0);
  const json o = json::parse(r.out);
  EXPECT_EQ(o["name"], "mxfp4_fc1_weight");
  EXPECT_EQ(o["declaration"]["kernels"]["mxfp4_fc1_weight"]["params"]["k_pad"], "scalar");
  EXPECT_EQ(o["declaration"]["kernels"]["mxfp4_fc1_weight"]["params"]["dst"]["extent"],
            "experts * 2 * i_pad * (k_pad / 2)");
  bool pads = false;
  for (const json& p : o["preconditions"]) pads = pads || p["check"] == "k_pad % 128 == 0";
  EXPECT_TRUE(pads) << r.out;
}

TEST(KernelsCommand, UnknownNameIsAUsageError) {
  const Ran r = RunCommand({.name = "mxfp4_fc3_weight"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("mxfp4_fc3_weight"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace loadplan::cli
