// Mutators for the registry rules: P9 (a registry kernel declared differently) and
// P10 (a call that breaks a registry kernel's precondition).
#include "fuzz/mutate_rules.h"
#include "kernels/registry/registry.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT

// A buffer parameter of a declared registry kernel gets the extent `e * 1`: the same
// value everywhere (so no bounds or dataflow rule notices), another expression tree.
std::optional<Mutation> RegistryContractChanged(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<std::pair<size_t, size_t>> params;  // (kernel, param)
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    if (kernels::FindKernel(m.kernels[k].name) == nullptr) continue;
    for (size_t p = 0; p < m.kernels[k].params.size(); ++p) {
      if (m.kernels[k].params[p].extent) params.push_back({k, p});
    }
  }
  if (params.empty()) return std::nullopt;
  const auto [k, p] = Choose(params, pick);
  Param& param = m.kernels[k].params[p];
  param.extent = *param.extent * Expr::Const(1);
  return Finish("registry-contract-changed", m,
                {{"P9", Ptr({"kernels", m.kernels[k].name, "params", param.name, "extent"})}});
}

// A new derive program dequantises one row of 48 elements: `cols % 32 == 0` breaks.
// Its carry is unread (an L3 warning, not an error).
std::optional<Mutation> RegistryPreconditionBroken(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (!EnsureStandardKernel(m, "mxfp4_dequant")) return std::nullopt;
  const std::string blocks = U8Input(m, 24, pick), scales = U8Input(m, 1, pick);
  const std::string dst = Fresh(m, "dq");
  AddBuffer(m, Buffer{.name = dst,
                      .kind = BufferKind::kCarry,
                      .dtype = base::Dtype::kBF16,
                      .shape = {Expr::Const(48)}});
  const std::string program = Fresh(m, "derive.dq");
  Program p{.name = program, .derive = true};
  p.calls.push_back(Call{
      .kernel = "mxfp4_dequant",
      .args = {Arg{.param = "blocks", .buffer = blocks},
               Arg{.param = "cols", .scalar = Expr::Const(48)}, Arg{.param = "dst", .buffer = dst},
               Arg{.param = "rows", .scalar = Expr::Const(1)},
               Arg{.param = "scales", .buffer = scales}},
      .grid = {Expr::Const(1)}});
  AddProgram(m, std::move(p));
  return Finish("registry-precondition-broken", m,
                {{"P10", Ptr({"programs", program, "calls", "0", "args", "cols"})}});
}

}  // namespace loadplan::fuzz::mut
