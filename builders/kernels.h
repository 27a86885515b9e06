// The standard kernel contracts: the derive kernels of the kernel registry
// (kernels/registry/registry.h: MXFP4 expert prep, copy, cast) and decode-step serving
// kernels. Backends implement the derive ones by name with exactly these contracts;
// examples/README.md documents each one's semantics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verifier/builder.h"
#include "verifier/manifest.h"

namespace loadplan::builders {

// Every standard contract, sorted by name.
std::vector<verifier::KernelSpec> StandardKernelSpecs();
// The same contracts in model form (pointers as in a manifest: /kernels/<name>/...).
std::vector<verifier::Kernel> StandardKernels();
// Adds the named standard contracts to `b`. An unknown name adds nothing, so
// Build() reports each call of it as an unknown kernel.
void AddStandardKernels(verifier::ManifestBuilder& b, const std::vector<std::string_view>& names);

}  // namespace loadplan::builders
