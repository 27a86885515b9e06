// Tests of the deployment file parser and the boundary rule between pipeline stages.
#include "simulator/deploy/deployment.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "verifier/verify.h"

namespace loadplan::simulator {
namespace {

using nlohmann::json;

json K3Stage() {
  std::ifstream in(std::string(LOADPLAN_SOURCE_DIR) + "/examples/k3-stage.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::vector<std::pair<std::string, std::string>> CodesOf(
    const std::vector<verifier::Diagnostic>& diags) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const verifier::Diagnostic& d : diags) out.emplace_back(d.code, d.pointer);
  return out;
}

using Codes = std::vector<std::pair<std::string, std::string>>;

TEST(ParseDeployment, StagesResolvedAgainstTheFileFolder) {
  const DeploymentParse p = ParseDeployment(
      R"({"deployment": "pp2", "device_memory": "288GB",
          "stages": [{"manifest": "a.json"}, {"manifest": "/abs/b.json", "device_memory": "h200"}]})",
      "dir/sub/deploy.json");
  ASSERT_TRUE(p.deployment) << (p.diags.empty() ? "" : p.diags[0].message);
  EXPECT_EQ(p.deployment->name, "pp2");
  EXPECT_EQ(p.deployment->device_memory, "288GB");
  ASSERT_EQ(p.deployment->stages.size(), 2u);
  EXPECT_EQ(p.deployment->stages[0].path, "dir/sub/a.json");
  EXPECT_EQ(p.deployment->stages[0].device_memory, std::nullopt);
  EXPECT_EQ(p.deployment->stages[1].path, "/abs/b.json");
  EXPECT_EQ(p.deployment->stages[1].device_memory, "h200");
  EXPECT_EQ(p.deployment->stages[1].ptr, "/stages/1");
}

TEST(ParseDeployment, EveryProblemWithItsPointer) {
  const DeploymentParse p = ParseDeployment(
      R"({"deployment": 3, "device_memory": "lots", "stagez": 1,
          "stages": [{"manifest": ""}, 7, {"manifest": "x.json", "device_memory": 288, "gpu": 1}]})",
      "d.json");
  EXPECT_FALSE(p.deployment);
  const Codes expected = {{"X1", "/stagez"},
                          {"X1", "/deployment"},
                          {"X1", "/device_memory"},
                          {"X1", "/stages/0/manifest"},
                          {"X1", "/stages/1"},
                          {"X1", "/stages/2/gpu"},
                          {"X1", "/stages/2/device_memory"}};
  EXPECT_EQ(CodesOf(p.diags), expected);
}

TEST(ParseDeployment, NotJsonNotAnObjectNoStages) {
  EXPECT_EQ(CodesOf(ParseDeployment("{", "d.json").diags), (Codes{{"X1", ""}}));
  EXPECT_EQ(CodesOf(ParseDeployment("[1]", "d.json").diags), (Codes{{"X1", ""}}));
  EXPECT_EQ(CodesOf(ParseDeployment(R"({"deployment": "x", "stages": []})", "d.json").diags),
            (Codes{{"X1", "/stages"}}));
  EXPECT_TRUE(LooksLikeDeployment(R"({"stages": 1})"));
  EXPECT_FALSE(LooksLikeDeployment(K3Stage().dump()));
  EXPECT_FALSE(LooksLikeDeployment("not json"));
}

// What nlohmann alone would accept silently: a key twice (it keeps the last) and nesting past
// the manifest parser's depth limit; both X1, as the manifest parser refuses them (S4, J2).
TEST(ParseDeployment, RepeatedKeysAndDeepNestingAreRefused) {
  const DeploymentParse twice = ParseDeployment(
      R"({"deployment": "x", "stages": [{"manifest": "a.json"}], "stages": [{"manifest": "b.json"}]})",
      "d.json");
  EXPECT_FALSE(twice.deployment);
  ASSERT_EQ(twice.diags.size(), 1u);
  EXPECT_NE(twice.diags[0].message.find("key \"stages\" appears twice"), std::string::npos);
  std::string deep = R"({"deployment": "x", "stages": [)";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  deep += "]}";
  const DeploymentParse nested = ParseDeployment(deep, "d.json");
  EXPECT_FALSE(nested.deployment);
  ASSERT_EQ(nested.diags.size(), 1u);
  EXPECT_NE(nested.diags[0].message.find("nests deeper than 64 levels"), std::string::npos);
}

// Stages parsed from (mutated) k3-stage JSON; verification is not needed for the rule.
struct Stages {
  std::vector<verifier::CheckOutput> checked;
  std::vector<StageView> Views() const {
    std::vector<StageView> v;
    for (size_t k = 0; k < checked.size(); ++k)
      v.push_back({.manifest = checked[k].manifest.get(), .label = "stage " + std::to_string(k)});
    return v;
  }
};
Stages Parse(const std::vector<json>& manifests) {
  Stages s;
  for (const json& m : manifests) s.checked.push_back(verifier::CheckText(m.dump()));
  return s;
}

TEST(CheckBoundaries, EightK3StagesChainCleanly) {
  const Stages s = Parse(std::vector<json>(8, K3Stage()));
  ASSERT_TRUE(s.checked[0].result.ok());
  EXPECT_TRUE(CheckBoundaries(s.Views()).empty());
}

TEST(CheckBoundaries, DtypeMismatchNamesBothBuffers) {
  json next = K3Stage();
  next["buffers"]["hidden_in"]["dtype"] = "F32";
  const std::vector<verifier::Diagnostic> d = CheckBoundaries(Parse({K3Stage(), next}).Views());
  ASSERT_EQ(CodesOf(d), (Codes{{"X4", "/stages/1"}}));
  ASSERT_EQ(d[0].notes.size(), 2u);
  EXPECT_EQ(d[0].notes[0].pointer, "/buffers/hidden_out");
  EXPECT_EQ(d[0].notes[1].pointer, "/buffers/hidden_in");
  EXPECT_NE(d[0].message.find("stage 0"), std::string::npos);
  EXPECT_NE(d[0].message.find("stage 1"), std::string::npos);
}

TEST(CheckBoundaries, ShapeMismatchHidden7168Vs4096) {
  json next = K3Stage();
  next["buffers"]["hidden_in"]["shape"] = {"batch", 4096};
  const std::vector<verifier::Diagnostic> d =
      CheckBoundaries(Parse({K3Stage(), K3Stage(), next}).Views());
  ASSERT_EQ(CodesOf(d), (Codes{{"X5", "/stages/2"}}));
  EXPECT_NE(d[0].message.find("7168 vs 4096"), std::string::npos) << d[0].message;
}

TEST(CheckBoundaries, RankAndVariableDimMismatch) {
  json rank = K3Stage();
  rank["buffers"]["hidden_in"]["shape"] = {"batch", 56, 128};
  EXPECT_EQ(CodesOf(CheckBoundaries(Parse({K3Stage(), rank}).Views())),
            (Codes{{"X5", "/stages/1"}}));
  json doubled = K3Stage();
  doubled["buffers"]["hidden_in"]["shape"] = {"batch * 2", 3584};
  const std::vector<verifier::Diagnostic> d = CheckBoundaries(Parse({K3Stage(), doubled}).Views());
  EXPECT_EQ(CodesOf(d), (Codes{{"X5", "/stages/1"}, {"X5", "/stages/1"}}));
}

TEST(CheckBoundaries, EqualOverTheBoxThoughWrittenDifferently) {
  json next = K3Stage();
  next["buffers"]["hidden_in"]["shape"] = {"(batch * 2) / 2", "7000 + 168"};
  EXPECT_TRUE(CheckBoundaries(Parse({K3Stage(), next}).Views()).empty());
}

TEST(CheckBoundaries, CountMismatch) {
  json two = K3Stage();
  two["buffers"]["extra_in"] = {{"kind", "input"}, {"dtype", "I32"}, {"shape", {"batch"}}};
  EXPECT_EQ(CodesOf(CheckBoundaries(Parse({K3Stage(), two}).Views())),
            (Codes{{"X3", "/stages/1"}}));
  json none = K3Stage();
  none["buffers"]["hidden_out"]["export"] = false;
  EXPECT_EQ(CodesOf(CheckBoundaries(Parse({none, K3Stage()}).Views())),
            (Codes{{"X3", "/stages/1"}}));
}

TEST(CheckBoundaries, VariablesDeclaredAlikeByBothStages) {
  json narrower = K3Stage();
  narrower["vars"]["batch"]["max"] = 128;
  EXPECT_EQ(CodesOf(CheckBoundaries(Parse({K3Stage(), narrower}).Views())),
            (Codes{{"X6", "/stages/1"}}));
  json renamed = K3Stage();
  renamed["vars"] = {{"tokens", {{"min", 1}, {"max", 256}}}};
  renamed["buffers"]["hidden_in"]["shape"] = {"tokens", 7168};
  EXPECT_EQ(CodesOf(CheckBoundaries(Parse({K3Stage(), renamed}).Views())),
            (Codes{{"X6", "/stages/1"}}));
}

}  // namespace
}  // namespace loadplan::simulator
