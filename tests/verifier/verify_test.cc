// Verify / CheckText end to end: derive order, sorting, parse + rule merging,
// one cause one error, the findings' message facts, the usage index and rule table.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verifier/rules/rules.h"
#include "verifier/usage.h"
#include "verifier/verify.h"

namespace loadplan::verifier {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(LOADPLAN_SOURCE_DIR) / "tests/data/rules" /
                   (name + ".json"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::pair<std::string, std::string>> Fired(const CheckOutput& out) {
  std::set<std::pair<std::string, std::string>> f;
  for (const Diagnostic& d : out.result.diags) f.insert({d.code, d.pointer});
  return f;
}

const Diagnostic& Only(const CheckOutput& out) {
  EXPECT_EQ(out.result.diags.size(), 1u);
  return out.result.diags.at(0);
}

TEST(Verify, RealisticManifestIsCleanAndOrdersDeriveProgramsByDataflow) {
  CheckOutput out = CheckText(Fixture("clean_realistic"));
  ASSERT_TRUE(out.parsed);
  EXPECT_TRUE(out.result.ok());
  EXPECT_TRUE(out.result.diags.empty());
  // derive.a.swizzle sorts first by name but reads what the fc1 programs write.
  EXPECT_EQ(out.result.derive_order,
            (std::vector<std::string>{"derive.l0.fc1", "derive.l1.fc1", "derive.a.swizzle"}));
  // Verify on the parsed model agrees with CheckText.
  VerifyResult again = Verify(*out.manifest);
  EXPECT_EQ(again.diags, out.result.diags);
  EXPECT_EQ(again.derive_order, out.result.derive_order);
}

// A hand-built model in any order verifies as its sorted form does (the parser and the
// builder sort; Verify must not depend on it).
TEST(Verify, UnsortedModelVerifiesLikeItsSortedForm) {
  for (const std::string name :
       {"clean_realistic", "D1", "B1", "K6", "P6", "P5_missing", "P5_extra"}) {
    CheckOutput sorted = CheckText(Fixture(name));
    ASSERT_TRUE(sorted.parsed) << name;
    Manifest m = *sorted.manifest;
    std::reverse(m.vars.begin(), m.vars.end());
    std::reverse(m.buffers.begin(), m.buffers.end());
    std::reverse(m.kernels.begin(), m.kernels.end());
    for (Kernel& k : m.kernels) std::reverse(k.params.begin(), k.params.end());
    std::reverse(m.programs.begin(), m.programs.end());
    for (Program& p : m.programs) {
      for (Call& c : p.calls) std::reverse(c.args.begin(), c.args.end());
    }
    ASSERT_FALSE(IsSortedModel(m)) << name;
    VerifyResult r = Verify(m);
    EXPECT_EQ(r.diags, Verify(*sorted.manifest).diags) << name;
    EXPECT_EQ(r.derive_order, sorted.result.derive_order) << name;
  }
}

// A parsed model already in name order is the verified model itself (no second copy); an
// unsorted one is verified as a sorted copy and the parsed model keeps the text's order.
TEST(CheckText, SortedModelIsSharedNotCopied) {
  CheckOutput out = CheckText(Fixture("clean_realistic"));
  ASSERT_TRUE(out.result.verified.has_value());
  ASSERT_TRUE(IsSortedModel(*out.manifest));
  EXPECT_EQ(&out.result.verified->manifest(), out.manifest.get());

  Manifest reversed = *out.manifest;
  std::reverse(reversed.buffers.begin(), reversed.buffers.end());
  auto shared = std::make_shared<const Manifest>(reversed);
  VerifyResult r = Verify(shared);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_NE(&r.verified->manifest(), shared.get());
  EXPECT_EQ(r.verified->manifest(), *out.manifest);
  EXPECT_EQ(shared->buffers, reversed.buffers);  // the caller's model is not reordered
}

TEST(Verify, CycleLeavesNoDeriveOrder) {
  CheckOutput out = CheckText(Fixture("D1"));
  EXPECT_FALSE(out.result.ok());
  EXPECT_TRUE(out.result.derive_order.empty());
  EXPECT_NE(Only(out).message.find("a -> b -> a"), std::string::npos);
  EXPECT_EQ(Only(out).notes.size(), 2u);  // each reading call of the cycle
}

TEST(CheckText, NotJsonIsUnparsedWithOneJ1) {
  CheckOutput out = CheckText("{\"schema\": 1,");
  EXPECT_FALSE(out.parsed);
  EXPECT_EQ(out.manifest, nullptr);
  EXPECT_EQ(Only(out).code, "J1");
}

TEST(CheckText, MergesParseAndRuleDiagnosticsSorted) {
  // An unknown key (S2, from the parser) and a short write (D4, a rule), plus a lint.
  std::string text = Fixture("D4");
  text.replace(text.find("\"kind\": \"input\""), 15, "\"kind\": \"input\", \"exprot\": true");
  text.replace(text.find("\"vars\""), 6, "\"buffers2\": {}, \"vars\"");
  CheckOutput out = CheckText(text);
  ASSERT_TRUE(out.parsed);
  std::set<std::string> codes;
  for (const Diagnostic& d : out.result.diags) codes.insert(d.code);
  EXPECT_EQ(codes, (std::set<std::string>{"S2", "D4"}));
  for (size_t i = 1; i < out.result.diags.size(); ++i) {
    EXPECT_FALSE(PointerLess(out.result.diags[i].pointer, out.result.diags[i - 1].pointer));
  }
}

TEST(CheckText, MalformedEntityCausesNoCascade) {
  // A bad dtype on the source (S7): no P6 at its use, no lint on it.
  std::string text = Fixture("clean_base");
  text.replace(text.find("\"U8\""), 4, "\"u8\"");
  CheckOutput out = CheckText(text);
  EXPECT_EQ(Fired(out),
            (std::set<std::pair<std::string, std::string>>{{"S7", "/buffers/w.raw/dtype"}}));
}

TEST(CheckText, MalformedWriterCausesNoOrphanRead) {
  // derive.w's only call is malformed (S10): derive.x's read of w is not reported as D2.
  std::string text = Fixture("D5");
  text.replace(text.find("\"kernel\": \"copy\""), 16, "\"kernel\": \"copy\", \"block\": [\"1+\"]");
  CheckOutput out = CheckText(text);
  EXPECT_EQ(Fired(out), (std::set<std::pair<std::string, std::string>>{
                            {"S10", "/programs/derive.w/calls/0/block/0"}}));
}

TEST(CheckText, FindingOneNamesTheVariableAndItsRange) {
  CheckOutput out = CheckText(Fixture("P4_scalar"));
  const Diagnostic& d = Only(out);
  EXPECT_EQ(d.code, "P4");
  EXPECT_NE(d.message.find("batch in [1, 8]"), std::string::npos) << d.message;
}

TEST(CheckText, FindingTwoNamesTheCarryAndItsWriter) {
  CheckOutput out = CheckText(Fixture("D2_serving_writer"));
  const Diagnostic& d = Only(out);
  EXPECT_EQ(d.code, "D2");
  EXPECT_NE(d.message.find("`c`"), std::string::npos) << d.message;
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].pointer, "/programs/fill/calls/0/args/dst");
}

TEST(CheckText, FindingThreeSaysHowManyBytes) {
  CheckOutput out = CheckText(Fixture("L1"));
  const Diagnostic& d = Only(out);
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_NE(d.message.find("saves up to 16 bytes"), std::string::npos) << d.message;
}

TEST(CheckText, BoundsFailureGivesTheWitness) {
  CheckOutput out = CheckText(Fixture("B1"));
  const Diagnostic& d = Only(out);
  EXPECT_NE(d.message.find("extent 128 of param y exceeds buffer y's 64 elements at batch=8"),
            std::string::npos)
      << d.message;
}

TEST(Verify, ModelWithoutParse) {
  // A hand-built model: a malformed call is skipped quietly, a good one checked.
  Manifest m;
  m.buffers.push_back(
      Buffer{.name = "w", .kind = BufferKind::kWeight, .tensor = "w", .shape = {Expr::Const(4)}});
  m.kernels.push_back(Kernel{.name = "k",
                             .params = {Param{.name = "x",
                                              .access = Access::kWrite,
                                              .dtype = base::Dtype::kU8,
                                              .extent = Expr::Const(4)}}});
  Program p{.name = "p"};
  p.calls.push_back(Call{.kernel = "nope", .malformed = true});
  p.calls.push_back(Call{.kernel = "k", .args = {Arg{.param = "x", .buffer = "w"}}});
  m.programs.push_back(p);
  AssignPointers(m);
  VerifyResult r = Verify(m);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].code, "K4");
  EXPECT_EQ(r.diags[0].pointer, "/programs/p/calls/1/args/x");
}

TEST(Usage, IndexesEveryResolvedUseAndMarksThePartialOnes) {
  CheckOutput out = CheckText(Fixture("S6_kernel"));
  UsageIndex u = BuildUsage(*out.manifest);
  ASSERT_EQ(u.Of("w").size(), 1u);  // the serving call's use is unresolved
  EXPECT_EQ(u.Of("w")[0].param, "dst");
  EXPECT_EQ(u.Of("w")[0].access, Access::kWrite);
  ASSERT_TRUE(u.Of("w")[0].extent.has_value());
  EXPECT_EQ(*u.Of("w")[0].extent, Expr::Const(16));
  EXPECT_EQ(u.partial, (std::set<std::string, std::less<>>{"w", "x", "y"}));
  EXPECT_TRUE(u.Of("nothing").empty());
}

TEST(Usage, ExtentSubstitutesTheCallsScalars) {
  CheckOutput out = CheckText(Fixture("clean_base"));
  UsageIndex u = BuildUsage(*out.manifest);
  ASSERT_EQ(u.Of("y").size(), 1u);
  EXPECT_EQ(ToString(*u.Of("y")[0].extent), "batch * 16");
  EXPECT_TRUE(u.partial.empty());
}

TEST(RuleTable, ListsEveryFamilyInPhaseOrder) {
  std::vector<std::string> names;
  for (const RuleFamily& f : AllRuleFamilies()) {
    names.emplace_back(f.name);
    EXPECT_NE(f.check, nullptr);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"structure", "kinds", "slices", "programs", "calls",
                                             "registry", "dataflow", "bounds", "lints"}));
}

}  // namespace
}  // namespace loadplan::verifier
