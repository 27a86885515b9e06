// The derive kernels' contracts (docs/kernels.md explains each mapping).
#include "kernels/contract.h"

#include <algorithm>

namespace loadplan::kernels {
namespace {

ParamContract Read(std::string name, std::string dtype, std::string extent) {
  return {std::move(name), "read", std::move(dtype), std::move(extent)};
}
ParamContract Write(std::string name, std::string dtype, std::string extent) {
  return {std::move(name), "write", std::move(dtype), std::move(extent)};
}
ParamContract Scalar(std::string name) { return {std::move(name), "scalar", "", ""}; }

KernelContract Make(std::string name, std::vector<ParamContract> params) {
  std::sort(params.begin(), params.end(),
            [](const ParamContract& a, const ParamContract& b) { return a.name < b.name; });
  return {std::move(name), std::move(params)};
}

// fc1: rows = 2I checkpoint rows, cols = bytes (weights, scales) per row; fc2:
// rows = H, cols likewise. dst extents are the padded, permuted shapes.
std::vector<KernelContract> Build() {
  const std::string fc_src = "experts*rows*cols";
  std::vector<KernelContract> v = {
      Make("cast_bf16_f32", {Read("src", "BF16", "n"), Write("dst", "F32", "n"), Scalar("n")}),
      Make("copy", {Read("src", "U8", "n"), Write("dst", "U8", "n"), Scalar("n")}),
      Make("mxfp4_fc1_bias", {Read("src", "BF16", "experts*rows"), Write("dst", "F32", "experts*2*i_pad"),
                              Scalar("experts"), Scalar("rows"), Scalar("i_pad")}),
      Make("mxfp4_fc1_scales",
           {Read("src", "U8", fc_src), Write("dst", "U8", "experts*2*i_pad*(k_pad/32)"), Scalar("experts"),
            Scalar("rows"), Scalar("cols"), Scalar("i_pad"), Scalar("k_pad")}),
      Make("mxfp4_fc1_weight",
           {Read("src", "U8", fc_src), Write("dst", "U8", "experts*2*i_pad*(k_pad/2)"), Scalar("experts"),
            Scalar("rows"), Scalar("cols"), Scalar("i_pad"), Scalar("k_pad")}),
      Make("mxfp4_fc2_bias", {Read("src", "BF16", "experts*rows"), Write("dst", "F32", "experts*h_pad"),
                              Scalar("experts"), Scalar("rows"), Scalar("h_pad")}),
      Make("mxfp4_fc2_scales",
           {Read("src", "U8", fc_src), Write("dst", "U8", "experts*h_pad*(i_pad/32)"), Scalar("experts"),
            Scalar("rows"), Scalar("cols"), Scalar("h_pad"), Scalar("i_pad")}),
      Make("mxfp4_dequant", {Read("blocks", "U8", "rows*(cols/2)"), Read("scales", "U8", "rows*(cols/32)"),
                             Write("dst", "BF16", "rows*cols"), Scalar("rows"), Scalar("cols")}),
      Make("mxfp4_fc2_weight",
           {Read("src", "U8", fc_src), Write("dst", "U8", "experts*h_pad*(i_pad/2)"), Scalar("experts"),
            Scalar("rows"), Scalar("cols"), Scalar("h_pad"), Scalar("i_pad")}),
  };
  std::sort(v.begin(), v.end(), [](const KernelContract& a, const KernelContract& b) { return a.name < b.name; });
  return v;
}

}  // namespace

const std::vector<KernelContract>& Contracts() {
  static const std::vector<KernelContract> kContracts = Build();
  return kContracts;
}

const KernelContract* FindContract(std::string_view name) {
  for (const KernelContract& k : Contracts()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const ParamContract* FindParam(const KernelContract& k, std::string_view param) {
  for (const ParamContract& p : k.params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

}  // namespace loadplan::kernels
