// The verifier-side properties (the host backend's is in properties_host.cc).
#include "fuzz/properties.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <rapidcheck.h>

#include "fuzz/first_wins_json.h"
#include "fuzz/mutators.h"
#include "simulator/check/plan_check.h"
#include "simulator/planner/planner.h"
#include "verifier/parse.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::fuzz {
namespace {

using nlohmann::json;

std::string Describe(const std::vector<verifier::Diagnostic>& diags) {
  std::string out;
  for (const verifier::Diagnostic& d : diags)
    out += d.code + " " + d.pointer + ": " + d.message + "\n";
  return out;
}

const Pick& RcPick() {
  static const Pick kPick = [](size_t n) { return *rc::gen::inRange<size_t>(0, n); };
  return kPick;
}

}  // namespace

void TagShape(const verifier::Manifest& m) {
  size_t calls = 0;
  for (const verifier::Program& p : m.programs) calls += p.derive ? p.calls.size() : 0;
  const char* depth = calls == 0  ? "no derive call"
                      : calls < 4 ? "1-3 derive calls"
                      : calls < 8 ? "4-7 derive calls"
                                  : "8+ derive calls";
  const bool list = std::any_of(m.buffers.begin(), m.buffers.end(),
                                [](const verifier::Buffer& b) { return b.tensors.has_value(); });
  RC_TAG(depth, m.vars.empty() ? "no variables" : "variables",
         list ? "a tensors list" : "no tensors list");
}

void CheckVerifiesClean(const verifier::Manifest& m) {
  TagShape(m);
  const verifier::VerifyResult r = verifier::Verify(m);
  if (!r.diags.empty()) RC_FAIL(Describe(r.diags) + verifier::WriteManifest(m));
}

void CheckPlanIsValid(const verifier::Manifest& m) {
  const verifier::VerifyResult r = verifier::Verify(m);
  RC_PRE(r.ok());
  TagShape(m);
  simulator::PlanOptions options;
  if (*rc::gen::inRange(0, 2) == 0) options.lanes = *rc::gen::inRange<uint32_t>(0, 5);
  if (*rc::gen::inRange(0, 2) == 0) options.prefetch = *rc::gen::inRange<uint32_t>(0, 5);
  options.placement =
      *rc::gen::element(simulator::PlacementPolicy::kFirstFit, simulator::PlacementPolicy::kBestFit,
                        simulator::PlacementPolicy::kExact, simulator::PlacementPolicy::kBest);
  options.alignment = *rc::gen::element<uint64_t>(0, 1, 8, 256);
  options.granularity = *rc::gen::element<uint64_t>(0, 1, 256, 2ull << 20);
  const simulator::LoadPlan plan = simulator::Plan(*r.verified, options);
  std::string why;
  for (const simulator::PlanViolation& v : simulator::CheckPlan(m, plan)) {
    why += std::string(simulator::PlanViolationKindName(v.kind)) + ": " + v.message + "\n";
  }
  if (!why.empty()) RC_FAIL(why + verifier::WriteManifest(m));
  RC_ASSERT(plan.derive_order == r.derive_order);
  RC_ASSERT(plan.lower_bound <= plan.arena_bytes);
}

void CheckMutationIsReported(const verifier::Manifest& m) {
  const std::vector<Mutator>& all = Mutators();
  const size_t first = *rc::gen::inRange<size_t>(0, all.size());
  std::optional<Mutation> mu;
  for (size_t i = 0; i < all.size() && !mu; ++i)
    mu = all[(first + i) % all.size()].apply(m, RcPick());
  RC_PRE(mu.has_value());
  RC_TAG(mu->mutator);
  const std::string problems = CheckMutation(*mu);
  if (!problems.empty()) RC_FAIL(problems + "document:\n" + mu->text);
}

void CheckRoundTrip(const verifier::Manifest& m) {
  TagShape(m);
  const std::string text = verifier::WriteManifest(m);
  const verifier::ParseOutput p = verifier::ParseManifest(text);
  if (!p.diags.empty()) RC_FAIL(Describe(p.diags) + text);
  RC_ASSERT(p.manifest.has_value());
  RC_ASSERT(*p.manifest == m);
  RC_ASSERT(verifier::WriteManifest(*p.manifest) == text);
}

void CheckMutationRoundTrip(const verifier::Manifest& m) {
  const Mutator& mutator = *rc::gen::elementOf(Mutators());
  const std::optional<Mutation> mu = mutator.apply(m, RcPick());
  RC_PRE(mu.has_value());
  const verifier::ParseOutput p = verifier::ParseManifest(mu->text);
  RC_PRE(p.diags.empty());  // the text mutators break the parse on purpose
  RC_TAG(std::string(mutator.name));
  RC_ASSERT(p.manifest.has_value());
  RC_ASSERT(verifier::WriteManifest(*p.manifest) == mu->text);
}

void CheckTextIsTotal(const std::string& text) {
  const verifier::CheckOutput out = verifier::CheckText(text);
  const std::optional<json> doc = ParseFirstWins(text);
  RC_TAG(!doc ? "not JSON" : out.result.ok() ? "verifies" : "JSON with errors");
  if (!doc) return;
  for (const verifier::Diagnostic& d : out.result.diags) {
    if (!PointerResolves(*doc, d.pointer))
      RC_FAIL(d.code + " at \"" + d.pointer + "\" does not resolve in:\n" + text);
    for (const verifier::Note& n : d.notes) {
      if (!PointerResolves(*doc, n.pointer))
        RC_FAIL(d.code + " note at \"" + n.pointer + "\" does not resolve in:\n" + text);
    }
  }
}

}  // namespace loadplan::fuzz
