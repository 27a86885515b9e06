// The verifier entry points: run every rule family over a model; parse + verify text.
#include "verifier/verify.h"

#include <optional>

#include "verifier/rules/rules.h"

namespace loadplan::verifier {

struct VerifyAccess {
  static VerifiedManifest Make(Manifest m, std::vector<std::string> order) {
    return VerifiedManifest(std::move(m), std::move(order));
  }
};

bool VerifyResult::ok() const {
  for (const Diagnostic& d : diags) {
    if (d.severity == Severity::kError) return false;
  }
  return true;
}

VerifyResult Verify(const Manifest& in, const VerifyOptions& options) {
  std::optional<Manifest> copy;
  const Manifest& m = InNameOrder(in, copy);
  RuleContext ctx = MakeRuleContext(m, options);
  DiagSink sink;
  for (const RuleFamily& family : AllRuleFamilies()) family.check(ctx, sink);
  VerifyResult out{.diags = sink.Sorted(), .derive_order = {}};
  if (ctx.derive.cycle.empty()) out.derive_order = ctx.derive.order;
  if (out.ok()) out.verified = VerifyAccess::Make(copy ? std::move(*copy) : in, out.derive_order);
  return out;
}

CheckOutput CheckText(std::string_view text, const VerifyOptions& options, const ParseLimits& limits) {
  ParseOutput parsed = ParseManifest(text, limits);
  DiagSink sink;
  for (Diagnostic& d : parsed.diags) sink.Report(std::move(d));
  CheckOutput out;
  out.parsed = parsed.manifest.has_value();
  if (out.parsed) {
    VerifyResult r = Verify(*parsed.manifest, options);
    for (Diagnostic& d : r.diags) sink.Report(std::move(d));
    out.result.derive_order = std::move(r.derive_order);
    out.result.verified = std::move(r.verified);
    out.manifest = std::move(parsed.manifest);
  }
  out.result.diags = sink.Sorted();
  if (!out.result.ok()) out.result.verified.reset();  // a parse error counts too
  return out;
}

}  // namespace loadplan::verifier
