// `loadplan kernels`: list the kernel registry, print one kernel's declaration.
#include "cli/cmd_kernels.h"

#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/registry/registry.h"
#include "verifier/registry_contract.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

using nlohmann::json;

// {"kernels": {NAME: {"params": ...}}} in the canonical writer's spelling of each value.
json Declaration(const kernels::KernelSpec& spec) {
  verifier::Manifest m{.name = spec.name, .kernels = {verifier::RegistryKernel(spec)}};
  json written = json::parse(verifier::WriteManifest(m));
  return json{{"kernels", std::move(written["kernels"])}};
}

void List(Format format, std::ostream& out) {
  if (format == Format::kText) {
    for (const kernels::KernelSpec& k : kernels::Kernels())
      out << fmt::format("{:<18} {}\n", k.name, k.doc);
    return;
  }
  json all = json::array();
  for (const kernels::KernelSpec& k : kernels::Kernels())
    all.push_back({{"name", k.name}, {"doc", k.doc}});
  out << all.dump(2) << "\n";
}

void Show(const kernels::KernelSpec& k, Format format, std::ostream& out) {
  if (format == Format::kText) {
    out << Declaration(k).dump(2) << "\n";
    return;
  }
  json pre = json::array();
  for (const kernels::Precondition& p : k.preconditions)
    pre.push_back({{"check", p.text}, {"why", p.why}});
  const json o = {{"name", k.name},
                  {"doc", k.doc},
                  {"preconditions", std::move(pre)},
                  {"declaration", Declaration(k)}};
  out << o.dump(2) << "\n";
}

}  // namespace

int RunKernels(const KernelsOptions& options, std::ostream& out, std::ostream& err) {
  if (options.name.empty()) {
    List(options.format, out);
    return 0;
  }
  const kernels::KernelSpec* k = kernels::FindKernel(options.name);
  if (k == nullptr) {
    err << fmt::format(
        "loadplan kernels: no kernel `{}` in the registry (`loadplan kernels` lists them)\n",
        options.name);
    return 2;
  }
  Show(*k, options.format, out);
  return 0;
}

int RunKernels(const KernelsOptions& options) { return RunKernels(options, std::cout, std::cerr); }

}  // namespace loadplan::cli
