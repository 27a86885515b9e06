// Tests of `loadplan plan DEPLOY.json`: the K3-class PP8 deployment, per-stage devices, stage
// and boundary errors, through cli::RunPlan as the command runs it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cmd_plan.h"
#include "examples/examples.h"

namespace loadplan::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json K3Stage() { return json::parse(examples::ExampleText("k3-stage")); }

// A fresh folder under the test temp dir for one test.
fs::path Folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("deploy_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void Write(const fs::path& path, const json& j) { std::ofstream(path) << j.dump(1); }

// A deployment of `n` stages; stage k reads manifests[k] (written as stage<k>.json) or the one
// named in `paths` when it is given.
fs::path WriteDeployment(const fs::path& dir, const std::vector<json>& stages,
                         const json& device_memory = "288GB") {
  json d = {{"deployment", "k3-pp8"}, {"stages", json::array()}};
  if (!device_memory.is_null()) d["device_memory"] = device_memory;
  for (size_t k = 0; k < stages.size(); ++k) d["stages"].push_back(stages[k]);
  Write(dir / "deploy.json", d);
  return dir / "deploy.json";
}

struct Ran {
  int rc = 0;
  std::string out, err;
};
Ran Plan(const std::string& file, Format format = Format::kJson,
         std::optional<std::string> device_memory = std::nullopt) {
  PlanCliOptions o{.file = file, .device_memory = device_memory, .format = format};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Ran r;
  r.rc = RunPlan(o);
  r.out = ::testing::internal::GetCapturedStdout();
  r.err = ::testing::internal::GetCapturedStderr();
  return r;
}

// Eight copies of the k3-stage example, each its own file, at 288 GB.
fs::path Pp8(const fs::path& dir, const json& stage3_device = nullptr) {
  std::vector<json> stages;
  for (int k = 0; k < 8; ++k) {
    const std::string name = "stage" + std::to_string(k) + ".json";
    Write(dir / name, K3Stage());
    json s = {{"manifest", name}};
    if (k == 3 && !stage3_device.is_null()) s["device_memory"] = stage3_device;
    stages.push_back(s);
  }
  return WriteDeployment(dir, stages);
}

TEST(PlanDeploy, K3Pp8EveryStageFitsWithSingleStagePlansNumbers) {
  const fs::path dir = Folder("pp8");
  const Ran r = Plan(Pp8(dir).string());
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["deployment"], "k3-pp8");
  EXPECT_EQ(j["fits"], true);
  EXPECT_EQ(j["boundaries"], 7);
  ASSERT_EQ(j["stages"].size(), 8u);
  for (int k = 0; k < 8; ++k) {
    const json& s = j["stages"][k];
    EXPECT_EQ(s["gpu"], k);
    EXPECT_EQ(s["manifest"], "k3-stage");
    EXPECT_EQ(s["fits"], true);
    EXPECT_EQ(s["device"]["bytes"], 288000000000ull);
    EXPECT_GT(s["headroom"].get<int64_t>(), 0);
    // `loadplan plan stageK.json --device-memory 288GB --format json`: the same report.
    const Ran single = Plan(s["file"].get<std::string>(), Format::kJson, "288GB");
    ASSERT_EQ(single.rc, 0) << single.err;
    const json one = json::parse(single.out);
    EXPECT_EQ(s["report"], one);
    for (const json& ph : one["phases"]) {
      const std::string name = ph["name"];
      EXPECT_EQ(s[name]["bytes"], ph["max"]["bytes"]) << name;
    }
    EXPECT_EQ(s["peak"], one["peak"]["max"]["bytes"]);
    EXPECT_EQ(s["headroom"].get<int64_t>(), int64_t{288000000000} - s["peak"].get<int64_t>());
  }
}

TEST(PlanDeploy, TextTableOneRowPerGpu) {
  const fs::path dir = Folder("pp8_text");
  const Ran r = Plan(Pp8(dir).string(), Format::kText);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("deployment k3-pp8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("serve peak"), std::string::npos);
  size_t rows = 0;
  for (size_t at = r.out.find("k3-stage "); at != std::string::npos;
       at = r.out.find("k3-stage ", at + 1))
    ++rows;
  EXPECT_EQ(rows, 8u) << r.out;
  EXPECT_NE(r.out.find("yes, "), std::string::npos);
}

TEST(PlanDeploy, StageDeviceMemoryOverridesTheDefault) {
  const fs::path dir = Folder("override");
  const Ran r = Plan(Pp8(dir, "16GiB").string());
  EXPECT_EQ(r.rc, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["fits"], false);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(j["stages"][k]["fits"], k != 3) << k;
    EXPECT_EQ(j["stages"][k]["device"]["bytes"], k == 3 ? 16ull << 30 : 288000000000ull);
  }
  EXPECT_LT(j["stages"][3]["headroom"].get<int64_t>(), 0);
  const Ran text = Plan((dir / "deploy.json").string(), Format::kText);
  EXPECT_EQ(text.rc, 1);
  EXPECT_NE(text.out.find(" short"), std::string::npos) << text.out;
}

TEST(PlanDeploy, CommandLineDeviceMemoryIsTheLastDefault) {
  const fs::path dir = Folder("cli_default");
  Write(dir / "k3.json", K3Stage());
  const fs::path file = WriteDeployment(dir, {{{"manifest", "k3.json"}}}, nullptr);
  const json none = json::parse(Plan(file.string()).out);
  EXPECT_EQ(none["stages"][0]["fits"], nullptr);
  const Ran small = Plan(file.string(), Format::kJson, "1GiB");
  EXPECT_EQ(small.rc, 1);
  EXPECT_EQ(json::parse(small.out)["stages"][0]["fits"], false);
}

// The diagnostics (code, pointer) of a failing run's JSON.
std::vector<std::pair<std::string, std::string>> Diags(const Ran& r) {
  std::vector<std::pair<std::string, std::string>> out;
  const json j = json::parse(r.out);
  for (const json& d : j["diagnostics"]) out.emplace_back(d["code"], d["pointer"]);
  return out;
}

TEST(PlanDeploy, UnreadableStageManifest) {
  const fs::path dir = Folder("unreadable");
  Write(dir / "k3.json", K3Stage());
  const fs::path file = WriteDeployment(
      dir, {{{"manifest", "k3.json"}}, {{"manifest", "k3.json"}}, {{"manifest", "missing.json"}}});
  const Ran r = Plan(file.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(Diags(r),
            (std::vector<std::pair<std::string, std::string>>{{"X2", "/stages/2/manifest"}}));
  const Ran text = Plan(file.string(), Format::kText);
  EXPECT_EQ(text.rc, 2);
  EXPECT_NE(text.err.find("error[X2] /stages/2/manifest"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("missing.json"), std::string::npos) << text.err;
}

TEST(PlanDeploy, StageVerificationErrorsCarryTheStageIndex) {
  const fs::path dir = Folder("stage_errors");
  json bad = K3Stage();
  bad["buffers"]["hidden_in"]["shape"] = {"batch", 4096};  // kernels read 7168 per token
  Write(dir / "k3.json", K3Stage());
  Write(dir / "bad.json", bad);
  const fs::path file =
      WriteDeployment(dir, {{{"manifest", "k3.json"}}, {{"manifest", "bad.json"}}});
  const Ran r = Plan(file.string(), Format::kText);
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("stage 1 ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("stage 0 ("), std::string::npos) << r.err;
}

TEST(PlanDeploy, BoundaryMismatchesFailThePlan) {
  const fs::path dir = Folder("boundary");
  json doubled = K3Stage();  // verifies (same element count) but is another shape
  doubled["buffers"]["hidden_in"]["shape"] = {"batch * 2", 3584};
  json extra = K3Stage();
  extra["buffers"]["extra_in"] = {{"kind", "input"}, {"dtype", "I32"}, {"shape", {"batch"}}};
  Write(dir / "k3.json", K3Stage());
  Write(dir / "doubled.json", doubled);
  Write(dir / "extra.json", extra);
  const fs::path file = WriteDeployment(
      dir,
      {{{"manifest", "k3.json"}}, {{"manifest", "doubled.json"}}, {{"manifest", "extra.json"}}});
  const Ran r = Plan(file.string());
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(Diags(r), (std::vector<std::pair<std::string, std::string>>{
                          {"X5", "/stages/1"}, {"X5", "/stages/1"}, {"X3", "/stages/2"}}));
}

TEST(PlanDeploy, MalformedDeploymentAndRefusedOptions) {
  const fs::path dir = Folder("malformed");
  Write(dir / "d.json", {{"deployment", "x"}, {"stages", {{{"manifest", 3}}}}});
  const Ran r = Plan((dir / "d.json").string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(Diags(r),
            (std::vector<std::pair<std::string, std::string>>{{"X1", "/stages/0/manifest"}}));
  PlanCliOptions o{.file = (dir / "d.json").string(), .svg = "x.svg"};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunPlan(o), 2);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("--svg"), std::string::npos);
}

}  // namespace
}  // namespace loadplan::cli
