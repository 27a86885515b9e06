// The standard kernel contracts. Extents are in elements of the parameter's dtype
// and reference only the kernel's scalar parameters (docs/manifest.md, kernels).
#include "builders/kernels.h"

#include <algorithm>

#include "kernels/registry/registry.h"

namespace loadplan::builders {
namespace {

using base::Dtype;
using verifier::KernelSpec;
using verifier::ReadParam;
using verifier::ReadWriteParam;
using verifier::ScalarParam;
using verifier::WriteParam;

// The derive kernels, generated from the kernel registry (kernels/registry/registry.h):
// the declarations a backend accepts, by construction.
std::vector<KernelSpec> DeriveKernels() {
  std::vector<KernelSpec> out;
  for (const kernels::KernelSpec& k : kernels::Kernels()) {
    KernelSpec spec{.name = k.name};
    for (const kernels::ParamSpec& p : k.params) {
      spec.params.push_back(
          p.access == verifier::Access::kScalar
              ? ScalarParam(p.name)
              : verifier::ParamSpec{p.name, p.access, p.dtype, verifier::Value(*p.extent)});
    }
    out.push_back(std::move(spec));
  }
  return out;
}

// Decode-step serving kernels: one new token per sequence, `tokens` of them.
std::vector<KernelSpec> ServingKernels() {
  const auto act = [](std::string n) {
    return ReadParam(std::move(n), Dtype::kBF16, "tokens*hidden");
  };
  const auto act_out = [](std::string n) {
    return WriteParam(std::move(n), Dtype::kBF16, "tokens*hidden");
  };
  return {
      {"embedding",
       {ReadParam("table", Dtype::kBF16, "vocab*hidden"), ReadParam("ids", Dtype::kI32, "tokens"),
        act_out("out"), ScalarParam("tokens"), ScalarParam("vocab"), ScalarParam("hidden")}},
      {"rmsnorm",
       {act("x"), ReadParam("weight", Dtype::kBF16, "hidden"), act_out("out"),
        ScalarParam("tokens"), ScalarParam("hidden")}},
      {"attention",
       {act("x"),
        act("residual"),
        act_out("out"),
        ReadParam("positions", Dtype::kI32, "tokens"),
        ReadParam("q_w", Dtype::kBF16, "heads*head_dim*hidden"),
        ReadParam("q_b", Dtype::kBF16, "heads*head_dim"),
        ReadParam("k_w", Dtype::kBF16, "kv_heads*head_dim*hidden"),
        ReadParam("k_b", Dtype::kBF16, "kv_heads*head_dim"),
        ReadParam("v_w", Dtype::kBF16, "kv_heads*head_dim*hidden"),
        ReadParam("v_b", Dtype::kBF16, "kv_heads*head_dim"),
        ReadParam("o_w", Dtype::kBF16, "hidden*heads*head_dim"),
        ReadParam("o_b", Dtype::kBF16, "hidden"),
        ReadParam("sinks", Dtype::kBF16, "heads"),
        ReadWriteParam("kv", Dtype::kBF16, "tokens*slots*2*kv_heads*head_dim"),
        ScalarParam("tokens"),
        ScalarParam("slots"),
        ScalarParam("window"),
        ScalarParam("hidden"),
        ScalarParam("heads"),
        ScalarParam("kv_heads"),
        ScalarParam("head_dim")}},
      {"router",
       {act("x"), ReadParam("weight", Dtype::kBF16, "experts*hidden"),
        ReadParam("bias", Dtype::kBF16, "experts"), WriteParam("ids", Dtype::kI32, "tokens*top_k"),
        WriteParam("weights", Dtype::kF32, "tokens*top_k"), ScalarParam("tokens"),
        ScalarParam("hidden"), ScalarParam("experts"), ScalarParam("top_k")}},
      {"moe",
       {act("x"), act("residual"), act_out("out"), ReadParam("ids", Dtype::kI32, "tokens*top_k"),
        ReadParam("weights", Dtype::kF32, "tokens*top_k"),
        ReadParam("fc1_w", Dtype::kU8, "experts*2*i_pad*(k_pad/2)"),
        ReadParam("fc1_s", Dtype::kU8, "experts*2*i_pad*(k_pad/32)"),
        ReadParam("fc1_b", Dtype::kF32, "experts*2*i_pad"),
        ReadParam("fc2_w", Dtype::kU8, "experts*h_pad*(i_pad/2)"),
        ReadParam("fc2_s", Dtype::kU8, "experts*h_pad*(i_pad/32)"),
        ReadParam("fc2_b", Dtype::kF32, "experts*h_pad"), ScalarParam("tokens"),
        ScalarParam("hidden"), ScalarParam("experts"), ScalarParam("top_k"), ScalarParam("i_pad"),
        ScalarParam("k_pad"), ScalarParam("h_pad")}},
      {"lm_head",
       {act("x"), ReadParam("weight", Dtype::kBF16, "vocab*hidden"),
        WriteParam("logits", Dtype::kF32, "tokens*vocab"), ScalarParam("tokens"),
        ScalarParam("hidden"), ScalarParam("vocab")}},
  };
}

}  // namespace

std::vector<KernelSpec> StandardKernelSpecs() {
  std::vector<KernelSpec> all = DeriveKernels();
  for (auto& k : ServingKernels()) all.push_back(std::move(k));
  std::sort(all.begin(), all.end(),
            [](const KernelSpec& a, const KernelSpec& b) { return a.name < b.name; });
  return all;
}

std::vector<verifier::Kernel> StandardKernels() {
  verifier::ManifestBuilder b("standard-kernels");
  for (auto& k : StandardKernelSpecs()) b.AddKernel(std::move(k));
  return b.Build().manifest.kernels;
}

void AddStandardKernels(verifier::ManifestBuilder& b, const std::vector<std::string_view>& names) {
  for (auto& k : StandardKernelSpecs()) {
    if (std::find(names.begin(), names.end(), k.name) != names.end()) b.AddKernel(std::move(k));
  }
}

}  // namespace loadplan::builders
