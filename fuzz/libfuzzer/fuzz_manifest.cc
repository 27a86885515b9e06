// libFuzzer target: manifest text -> CheckText (parse + every rule). Aborts when a reported
// pointer does not resolve in the document, when a manifest that verifies does not round-trip
// through the canonical writer, or when its plan fails the independent plan checker.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/first_wins_json.h"
#include "simulator/check/plan_check.h"
#include "simulator/planner/planner.h"
#include "verifier/parse.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_manifest: %s\n", why.c_str());
  std::abort();
}

// Against the verifier's reading of repeated keys (the first wins): fuzz/first_wins_json.h.
void CheckPointers(std::string_view text, const loadplan::verifier::CheckOutput& out) {
  using loadplan::fuzz::PointerResolves;
  const std::optional<json> doc = loadplan::fuzz::ParseFirstWins(text);
  if (!doc) return;
  for (const loadplan::verifier::Diagnostic& d : out.result.diags) {
    if (!PointerResolves(*doc, d.pointer))
      Fail(d.code + " at \"" + d.pointer + "\" does not resolve");
    for (const loadplan::verifier::Note& n : d.notes) {
      if (!PointerResolves(*doc, n.pointer))
        Fail(d.code + " note at \"" + n.pointer + "\" does not resolve");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loadplan;  // NOLINT
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const verifier::CheckOutput out = verifier::CheckText(text);
  CheckPointers(text, out);
  if (!out.parsed || !out.manifest || !out.result.ok()) return 0;
  const std::string written = verifier::WriteManifest(*out.manifest);
  const verifier::ParseOutput again = verifier::ParseManifest(written);
  if (!again.manifest || !(*again.manifest == *out.manifest)) Fail("parse(write(m)) != m");
  if (verifier::WriteManifest(*again.manifest) != written)
    Fail("write(parse(write(m))) != write(m)");
  const simulator::LoadPlan plan = simulator::Plan(*out.result.verified);
  const auto violations = simulator::CheckPlan(*out.manifest, plan);
  if (!violations.empty())
    Fail("plan violates " + std::string(simulator::PlanViolationKindName(violations[0].kind)) +
         ": " + violations[0].message);
  return 0;
}
