// `loadplan kernels [NAME] [--format json]`: the kernel registry (kernels/registry/registry.h).
#pragma once

#include <ostream>
#include <string>

#include "cli/cmd_check.h"

namespace loadplan::cli {

struct KernelsOptions {
  std::string name;  // empty: list every kernel
  Format format = Format::kText;
};

// Without a name: one line per registry kernel (name, doc), or a JSON array of
// {name, doc}. With a name, text: the kernel's declaration as manifest JSON, ready to
// paste (`{"kernels": {NAME: {"params": ...}}}`); JSON: {name, doc, preconditions:
// [{check, why}], declaration}. Exit code 0, or 2 for a name the registry lacks.
int RunKernels(const KernelsOptions& options, std::ostream& out, std::ostream& err);
// The same on stdout / stderr.
int RunKernels(const KernelsOptions& options);

}  // namespace loadplan::cli
