// A deployment: N pipeline stages, one manifest and one GPU each (docs/deploy.md). Parsing
// the deployment file, and the boundary check between consecutive stages.
//
//   {"deployment": "k3-pp8", "device_memory": "288GB",
//    "stages": [{"manifest": "k3-stage.json", "device_memory": "h200"}, ...]}
//
// Problems are verifier diagnostics (codes X1..X6 below) whose pointers point into the
// deployment file (/stages/3/manifest); notes point into the stage manifests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verifier/diag.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::simulator {

namespace deploy_codes {
inline constexpr std::string_view kStructure = "X1";   // not an object, missing/unknown key, type
inline constexpr std::string_view kStageInput = "X2";  // a stage manifest unreadable or not JSON
inline constexpr std::string_view kCount = "X3";       // exports of k != inputs of k+1 (count)
inline constexpr std::string_view kDtype = "X4";       // a boundary pair differs in dtype
inline constexpr std::string_view kShape = "X5";       // differs in rank or in a dim's value
inline constexpr std::string_view kUndecided = "X6";   // variable not declared alike, or unproved
}  // namespace deploy_codes

struct DeploymentStage {
  std::string manifest;                      // as written
  std::string path;                          // resolved against the deployment file's folder
  std::optional<std::string> device_memory;  // as written ("288GB", "h200")
  std::string ptr;                           // /stages/<k>
  bool operator==(const DeploymentStage&) const = default;
};

struct Deployment {
  std::string name;
  std::vector<DeploymentStage> stages;
  std::optional<std::string> device_memory;  // the default for stages without one
  // "tensor_parallel": T > 1: the stages are P x T ranks, P pipeline stages of T
  // tensor-parallel ranks each (stage p's rank t is stages[p T + t]; each binds its slices of
  // the checkpoint; boundaries run between stage p's rank t and stage p+1's rank t).
  int64_t tensor_parallel = 1;
  bool operator==(const Deployment&) const = default;
};

struct DeploymentParse {
  std::optional<Deployment> deployment;  // set when there are no errors
  std::vector<verifier::Diagnostic> diags;
};

// True when `text` is a JSON object with a top-level "stages" key (a deployment, not a
// manifest: manifests have no such key).
bool LooksLikeDeployment(std::string_view text);

// Parses a deployment file's text; `path` is the file's path (stage paths are resolved
// against its folder). Every problem is an X1 diagnostic; device_memory values must be a size
// or a preset (ResolveDeviceMemory; "free" is not accepted in a file).
DeploymentParse ParseDeployment(std::string_view text, std::string_view path);

// One stage for the boundary check: its manifest (verified) and its place in the deployment.
struct StageView {
  const verifier::Manifest* manifest = nullptr;
  std::string label;  // "stage 3 (k3-stage.json)"
};

// The boundary rule between consecutive stages k and k+1: stage k's exported outputs in name
// order pair with stage k+1's inputs in name order (stage 0's inputs and the last stage's
// outputs are free). Each pair agrees in dtype, rank and every dim's value over the whole
// variable box (proved both ways with verifier::ProveLessEq); every variable a paired shape
// uses is declared by both stages with the same range. An undecided proof is an error (X6).
// Diagnostics point at /stages/<k+1> (count) or /stages/<k+1>/boundary/<i> (a pair), with
// notes naming both buffers' pointers. Cost: two proofs per dim of every pair.
std::vector<verifier::Diagnostic> CheckBoundaries(const std::vector<StageView>& stages,
                                                  const verifier::ProofBudget& budget = {});

}  // namespace loadplan::simulator
