// Binding variables to values from text ("batch=4", the values of `loadplan plan --at`):
// each name must be a variable of the manifest, each value an integer inside its range, and
// no variable may be bound twice.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::verifier {

// "batch=4" -> {"batch", 4}. Errors (kInvalidInput): "expected VAR=VALUE",
// "VALUE must be an integer".
[[nodiscard]] base::Result<std::pair<std::string, int64_t>> ParseBinding(std::string_view text);

// Binds every text in order. The error names the offending text and why:
// "batch=0: outside [1, 256]", "bogus=1: no variable `bogus` in the manifest",
// "batch=3: `batch` is already bound (--at batch=2)".
[[nodiscard]] base::Result<Assignment> BindAssignment(const Manifest& m,
                                                      std::span<const std::string> texts);

}  // namespace loadplan::verifier
