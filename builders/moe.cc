// MXFP4 expert layers (checkpoint tensors, carries, derive programs) and MoE serving calls.
#include "builders/moe.h"

#include <array>

#include <fmt/format.h>

namespace loadplan::builders {
namespace {

using base::Dtype;
using verifier::Dims;

// One expert tensor family: checkpoint form, derived form and the kernel between.
struct Family {
  const char* name;    // fc1_w ...
  const char* tensor;  // checkpoint suffix after mlp.experts.
  const char* kernel;
  Dtype raw_dtype;
  Dims raw_shape;
  Dtype dtype;
  Dims shape;
  verifier::Args scalars;
  const char* encoding;  // nullptr: none
};

std::array<Family, 6> Families(const ExpertDims& d) {
  const int64_t e = d.experts, h = d.hidden, i = d.intermediate;
  return {{
      {"fc1_w",
       "gate_up_proj_blocks",
       "mxfp4_fc1_weight",
       Dtype::kU8,
       {e, 2 * i, h / 32, 16},
       Dtype::kU8,
       {e, 2 * d.i_pad, d.k_pad / 2},
       {{"experts", e}, {"rows", 2 * i}, {"cols", h / 2}, {"i_pad", d.i_pad}, {"k_pad", d.k_pad}},
       "fp4_e2m1x2"},
      {"fc1_s",
       "gate_up_proj_scales",
       "mxfp4_fc1_scales",
       Dtype::kU8,
       {e, 2 * i, h / 32},
       Dtype::kU8,
       {e, 2 * d.i_pad, d.k_pad / 32},
       {{"experts", e}, {"rows", 2 * i}, {"cols", h / 32}, {"i_pad", d.i_pad}, {"k_pad", d.k_pad}},
       "e8m0"},
      {"fc1_b",
       "gate_up_proj_bias",
       "mxfp4_fc1_bias",
       Dtype::kBF16,
       {e, 2 * i},
       Dtype::kF32,
       {e, 2 * d.i_pad},
       {{"experts", e}, {"rows", 2 * i}, {"i_pad", d.i_pad}},
       nullptr},
      {"fc2_w",
       "down_proj_blocks",
       "mxfp4_fc2_weight",
       Dtype::kU8,
       {e, h, i / 32, 16},
       Dtype::kU8,
       {e, d.h_pad, d.i_pad / 2},
       {{"experts", e}, {"rows", h}, {"cols", i / 2}, {"h_pad", d.h_pad}, {"i_pad", d.i_pad}},
       "fp4_e2m1x2"},
      {"fc2_s",
       "down_proj_scales",
       "mxfp4_fc2_scales",
       Dtype::kU8,
       {e, h, i / 32},
       Dtype::kU8,
       {e, d.h_pad, d.i_pad / 32},
       {{"experts", e}, {"rows", h}, {"cols", i / 32}, {"h_pad", d.h_pad}, {"i_pad", d.i_pad}},
       "e8m0"},
      {"fc2_b",
       "down_proj_bias",
       "mxfp4_fc2_bias",
       Dtype::kBF16,
       {e, h},
       Dtype::kF32,
       {e, d.h_pad},
       {{"experts", e}, {"rows", h}, {"h_pad", d.h_pad}},
       nullptr},
  }};
}

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

std::string MakeExpertDims(int64_t experts, int64_t hidden, int64_t intermediate, ExpertDims& out,
                           int64_t multiple) {
  if (experts <= 0 || hidden <= 0 || intermediate <= 0 || hidden % 32 != 0 ||
      intermediate % 32 != 0) {
    return fmt::format(
        "expert dims E={} H={} I={}: need positive sizes with H and I multiples of 32", experts,
        hidden, intermediate);
  }
  if (multiple <= 0 || multiple % 128 != 0)
    return fmt::format("pad multiple {} is not a multiple of 128", multiple);
  out = ExpertDims{.experts = experts,
                   .hidden = hidden,
                   .intermediate = intermediate,
                   .i_pad = RoundUp(intermediate, multiple),
                   .k_pad = RoundUp(hidden, multiple),
                   .h_pad = RoundUp(hidden, multiple)};
  return {};
}

std::string LayerTensor(int layer, std::string_view suffix) {
  return fmt::format("model.layers.{}.{}", layer, suffix);
}

void AddExpertLayer(verifier::ManifestBuilder& b, int layer, const std::string& prefix,
                    const ExpertDims& d, bool exported) {
  for (auto& f : Families(d)) {
    const std::string carry = fmt::format("{}.{}", prefix, f.name);
    const std::string raw = carry + ".raw";
    verifier::BufferOptions options;
    if (f.encoding) options.encoding = f.encoding;
    b.Checkpoint(raw, LayerTensor(layer, fmt::format("mlp.experts.{}", f.tensor)), f.raw_dtype,
                 f.raw_shape, options);
    b.Carry(carry, f.dtype, f.shape, {.exported = exported});
    verifier::Args args = f.scalars;
    args.emplace_back("src", raw);
    args.emplace_back("dst", carry);
    b.AddDerive(fmt::format("derive.{}.{}", prefix, f.name))
        .Call(f.kernel, std::move(args), {d.experts});
  }
}

void AddRouterWeights(verifier::ManifestBuilder& b, int layer, const std::string& prefix,
                      const ExpertDims& d) {
  b.Checkpoint(prefix + ".router_w", LayerTensor(layer, "mlp.router.weight"), Dtype::kBF16,
               {d.experts, d.hidden});
  b.Checkpoint(prefix + ".router_b", LayerTensor(layer, "mlp.router.bias"), Dtype::kBF16,
               {d.experts});
}

void AddMoeCalls(verifier::ProgramBuilder& p, const MoeCall& c, const ExpertDims& d) {
  const std::string& l = c.prefix;
  p.Call("router",
         {{"x", c.x},
          {"weight", l + ".router_w"},
          {"bias", l + ".router_b"},
          {"ids", c.ids},
          {"weights", c.weights},
          {"tokens", c.tokens},
          {"hidden", d.hidden},
          {"experts", d.experts},
          {"top_k", c.top_k}},
         {c.tokens});
  p.Call("moe",
         {{"x", c.x},
          {"residual", c.residual},
          {"out", c.out},
          {"ids", c.ids},
          {"weights", c.weights},
          {"fc1_w", l + ".fc1_w"},
          {"fc1_s", l + ".fc1_s"},
          {"fc1_b", l + ".fc1_b"},
          {"fc2_w", l + ".fc2_w"},
          {"fc2_s", l + ".fc2_s"},
          {"fc2_b", l + ".fc2_b"},
          {"tokens", c.tokens},
          {"hidden", d.hidden},
          {"experts", d.experts},
          {"top_k", c.top_k},
          {"i_pad", d.i_pad},
          {"k_pad", d.k_pad},
          {"h_pad", d.h_pad}},
         {c.tokens, c.top_k});
}

}  // namespace loadplan::builders
