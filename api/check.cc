// The API's verify and plan: CheckText / CheckFile, and PlanLoad (planner + plan checker).
#include <fmt/format.h>

#include "api/loadplan.h"
#include "simulator/check/plan_check.h"
#include "verifier/manifest_file.h"
#include "verifier/parse.h"

namespace loadplan::api {

verifier::CheckOutput CheckText(std::string_view text) { return verifier::CheckText(text); }

base::Result<std::string> ReadManifestText(const std::string& path) {
  return verifier::ReadManifestFile(path, verifier::ParseLimits{}.max_bytes);
}

base::Result<verifier::CheckOutput> CheckFile(const std::string& path) {
  const verifier::ParseLimits limits;
  base::Result<std::string> text = verifier::ReadManifestFile(path, limits.max_bytes);
  if (!text.ok()) return text.status();
  return verifier::CheckText(*text, {}, limits);
}

base::Result<simulator::LoadPlan> PlanLoad(const verifier::VerifiedManifest& manifest,
                                           const simulator::PlanOptions& options) {
  simulator::LoadPlan plan = simulator::Plan(manifest, options);
  const std::vector<simulator::PlanViolation> violations =
      simulator::CheckPlan(manifest.manifest(), plan);
  if (violations.empty()) return plan;
  std::string why;
  for (const simulator::PlanViolation& v : violations) {
    why += fmt::format("\n  {}: {}", simulator::PlanViolationKindName(v.kind), v.message);
  }
  return base::Status::Error("the plan checker rejects the plan (a planner bug):" + why,
                             base::ErrorKind::kInternal);
}

}  // namespace loadplan::api
