// Preconditions of registry kernels as text: "lhs cmp rhs" with cmp one of == <= < >= >
// and each side an expression (expr/expr.h) over the kernel's scalars.
#pragma once

#include <optional>
#include <string_view>

#include "kernels/registry/registry.h"

namespace loadplan::kernels {

// nullopt when `text` has no comparison, more than one, or a side does not parse.
std::optional<Precondition> ParsePrecondition(std::string_view text, std::string_view why);

}  // namespace loadplan::kernels
