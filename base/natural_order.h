// Names in the order people read them: runs of digits compared by value ("l2" before "l10",
// "model.layers.9" before "model.layers.10"), everything else byte by byte.
#pragma once

#include <string_view>

namespace loadplan::base {

// A strict weak order, total on distinct strings: where two names are equal in value ("l02"
// and "l2") the plain byte order decides.
[[nodiscard]] bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace loadplan::base
