// The verifier entry points: run every rule family over a model; parse + verify text.
#include "verifier/verify.h"

#include <optional>

#include "verifier/rules/rules.h"

namespace loadplan::verifier {

struct VerifyAccess {
  static VerifiedManifest Make(std::shared_ptr<const Manifest> m, std::vector<std::string> order) {
    return VerifiedManifest(std::move(m), std::move(order));
  }
};

bool VerifyResult::ok() const {
  for (const Diagnostic& d : diags) {
    if (d.severity == Severity::kError) return false;
  }
  return true;
}

namespace {

// Verifies `in`; `shared` is `in` when the caller already shares it (then no copy is made
// when `in` is in name order), else null.
VerifyResult VerifyModel(const Manifest& in, std::shared_ptr<const Manifest> shared,
                         const VerifyOptions& options) {
  std::optional<Manifest> copy;
  const Manifest& m = InNameOrder(in, copy);
  RuleContext ctx = MakeRuleContext(m, options);
  DiagSink sink;
  for (const RuleFamily& family : AllRuleFamilies()) family.check(ctx, sink);
  VerifyResult out{.diags = sink.Sorted(), .derive_order = {}};
  if (ctx.derive.cycle.empty()) out.derive_order = ctx.derive.order;
  if (!out.ok()) return out;
  if (copy) {
    shared = std::make_shared<const Manifest>(std::move(*copy));
  } else if (!shared) {
    shared = std::make_shared<const Manifest>(in);
  }
  out.verified = VerifyAccess::Make(std::move(shared), out.derive_order);
  return out;
}

}  // namespace

VerifyResult Verify(const Manifest& m, const VerifyOptions& options) {
  return VerifyModel(m, nullptr, options);
}

VerifyResult Verify(std::shared_ptr<const Manifest> m, const VerifyOptions& options) {
  const Manifest& model = *m;
  return VerifyModel(model, std::move(m), options);
}

CheckOutput CheckText(std::string_view text, const VerifyOptions& options,
                      const ParseLimits& limits) {
  ParseOutput parsed = ParseManifest(text, limits);
  DiagSink sink;
  for (Diagnostic& d : parsed.diags) sink.Report(std::move(d));
  CheckOutput out;
  out.parsed = parsed.manifest.has_value();
  if (out.parsed) {
    out.manifest = std::make_shared<const Manifest>(std::move(*parsed.manifest));
    VerifyResult r = Verify(out.manifest, options);
    for (Diagnostic& d : r.diags) sink.Report(std::move(d));
    out.result.derive_order = std::move(r.derive_order);
    out.result.verified = std::move(r.verified);
  }
  out.result.diags = sink.Sorted();
  if (!out.result.ok()) out.result.verified.reset();  // a parse error counts too
  return out;
}

}  // namespace loadplan::verifier
