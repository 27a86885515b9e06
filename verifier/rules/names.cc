// Did-you-mean hints and the scalar-or-name test of buffer arguments.
#include "verifier/rules/names.h"

#include <fmt/format.h>

#include "verifier/diag.h"
#include "verifier/expr.h"

namespace loadplan::verifier::rules {

std::string SuggestHint(std::string_view word, const std::vector<std::string>& candidates,
                        std::string_view otherwise) {
  std::string best = DidYouMean(word, candidates);
  if (best.empty()) return std::string(otherwise);
  return fmt::format("did you mean `{}`?", best);
}

bool LooksScalar(const Manifest& m, std::string_view text) {
  base::Result<Expr> r = ParseExpr(text);
  if (!r.ok()) return false;
  for (const std::string& v : Variables(*r)) {
    if (m.FindVar(v) == nullptr) return false;
  }
  return true;
}

}  // namespace loadplan::verifier::rules
