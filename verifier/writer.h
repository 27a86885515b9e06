// Canonical manifest writer: keys sorted, fixed indentation, expressions in
// canonical text, defaults omitted. ParseManifest(WriteManifest(m)) == m (up to
// pointers, which the parser recomputes identically).
#pragma once

#include <string>

#include "verifier/manifest.h"

namespace loadplan::verifier {

std::string WriteManifest(const Manifest& m);

}  // namespace loadplan::verifier
