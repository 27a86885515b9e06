// The registry table: every derive kernel's contract, preconditions and doc (docs/kernels.md).
#include "kernels/registry/registry.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "kernels/registry/precondition.h"

namespace loadplan::kernels {
namespace {

using base::Access;
using base::Dtype;

struct PreText {
  std::string_view text, why;
};

ParamSpec Buffer(std::string_view name, Access access, Dtype dtype, std::string_view extent) {
  base::Result<expr::Expr> e = expr::ParseExpr(extent);
  if (!e.ok()) std::abort();  // a broken table row: registry_test builds the table
  return {std::string(name), access, dtype, std::move(e).value()};
}
ParamSpec Read(std::string_view n, Dtype d, std::string_view e) {
  return Buffer(n, Access::kRead, d, e);
}
ParamSpec Write(std::string_view n, Dtype d, std::string_view e) {
  return Buffer(n, Access::kWrite, d, e);
}
ParamSpec Scalar(std::string_view name) { return {.name = std::string(name)}; }

// Params sorted by name; `scalar >= 0` for every scalar (in declaration order), then `own`.
KernelSpec Row(KernelId id, std::string_view name, std::string_view doc,
               std::vector<ParamSpec> params, std::vector<PreText> own) {
  KernelSpec k{.id = id, .name = std::string(name), .doc = std::string(doc)};
  for (const ParamSpec& p : params) {
    if (p.access != Access::kScalar) continue;
    k.preconditions.push_back(
        *ParsePrecondition(p.name + " >= 0", "scalars are sizes: never negative"));
  }
  for (const PreText& t : own) {
    std::optional<Precondition> p = ParsePrecondition(t.text, t.why);
    if (!p) std::abort();  // a broken table row
    k.preconditions.push_back(std::move(*p));
  }
  std::sort(params.begin(), params.end(),
            [](const ParamSpec& a, const ParamSpec& b) { return a.name < b.name; });
  k.params = std::move(params);
  return k;
}

constexpr PreText kExperts{"experts <= 65535", "experts is a CUDA grid dimension"};
constexpr std::string_view kBands =
    "the 32-row block shuffle and the 128x4 swizzle work on 128-row bands";
constexpr std::string_view kIndex32 = "output rows and row bytes are indexed with 32-bit integers";

// fc1 rows: rows = 2I checkpoint rows (gate and up interleaved) -> 2*i_pad output rows.
std::vector<PreText> Fc1Rows() {
  return {kExperts,
          {"i_pad % 128 == 0", kBands},
          {"2 * i_pad <= 2147483519", kIndex32},
          {"rows % 2 == 0", "rows is 2I: gate row 2i and up row 2i+1"},
          {"rows / 2 <= i_pad", "the I gate/up pairs fit i_pad padded rows"}};
}

// fc2 rows: rows = H checkpoint rows -> h_pad output rows.
std::vector<PreText> Fc2Rows() {
  return {kExperts,
          {"h_pad % 128 == 0", kBands},
          {"h_pad <= 2147483519", kIndex32},
          {"rows <= h_pad", "the H rows fit h_pad padded rows"}};
}

// The row-byte checks of a weight or scale kernel: pad % 128, pad / div fits 32 bits, cols fit.
std::vector<PreText> WithCols(std::vector<PreText> rows, std::array<std::string_view, 3> texts) {
  rows.push_back({texts[0], "pads are multiples of 128 (docs/kernels.md, the MXFP4 recipe)"});
  rows.push_back({texts[1], kIndex32});
  rows.push_back({texts[2], "a checkpoint row's bytes fit the padded row"});
  return rows;
}

std::vector<KernelSpec> MxfpRows() {
  const std::vector<ParamSpec> fc1 = {Scalar("experts"), Scalar("rows"), Scalar("cols"),
                                      Scalar("i_pad"), Scalar("k_pad")};
  const std::vector<ParamSpec> fc2 = {Scalar("experts"), Scalar("rows"), Scalar("cols"),
                                      Scalar("h_pad"), Scalar("i_pad")};
  const auto with = [](std::vector<ParamSpec> scalars, ParamSpec src, ParamSpec dst) {
    scalars.insert(scalars.begin(), {std::move(src), std::move(dst)});
    return scalars;
  };
  const ParamSpec src = Read("src", Dtype::kU8, "experts*rows*cols");
  return {
      Row(KernelId::kMxfp4Fc1Weight, "mxfp4_fc1_weight",
          "gpt-oss fc1 weight: up/gate rows interleaved into 2*i_pad rows of k_pad/2 bytes, "
          "block-shuffled",
          with(fc1, src, Write("dst", Dtype::kU8, "experts*2*i_pad*(k_pad/2)")),
          WithCols(Fc1Rows(),
                   {"k_pad % 128 == 0", "k_pad / 2 <= 2147483647", "cols <= k_pad / 2"})),
      Row(KernelId::kMxfp4Fc1Scales, "mxfp4_fc1_scales",
          "gpt-oss fc1 scales: the fc1 rows of k_pad/32 bytes, then the 128x4 swizzle",
          with(fc1, src, Write("dst", Dtype::kU8, "experts*2*i_pad*(k_pad/32)")),
          WithCols(Fc1Rows(),
                   {"k_pad % 128 == 0", "k_pad / 32 <= 2147483647", "cols <= k_pad / 32"})),
      Row(KernelId::kMxfp4Fc1Bias, "mxfp4_fc1_bias",
          "gpt-oss fc1 bias: BF16 -> F32 over the fc1 rows",
          {Read("src", Dtype::kBF16, "experts*rows"), Write("dst", Dtype::kF32, "experts*2*i_pad"),
           Scalar("experts"), Scalar("rows"), Scalar("i_pad")},
          Fc1Rows()),
      Row(KernelId::kMxfp4Fc2Weight, "mxfp4_fc2_weight",
          "gpt-oss fc2 weight: rows padded to h_pad rows of i_pad/2 bytes, block-shuffled",
          with(fc2, src, Write("dst", Dtype::kU8, "experts*h_pad*(i_pad/2)")),
          WithCols(Fc2Rows(),
                   {"i_pad % 128 == 0", "i_pad / 2 <= 2147483647", "cols <= i_pad / 2"})),
      Row(KernelId::kMxfp4Fc2Scales, "mxfp4_fc2_scales",
          "gpt-oss fc2 scales: the fc2 rows of i_pad/32 bytes, then the 128x4 swizzle",
          with(fc2, src, Write("dst", Dtype::kU8, "experts*h_pad*(i_pad/32)")),
          WithCols(Fc2Rows(),
                   {"i_pad % 128 == 0", "i_pad / 32 <= 2147483647", "cols <= i_pad / 32"})),
      Row(KernelId::kMxfp4Fc2Bias, "mxfp4_fc2_bias",
          "gpt-oss fc2 bias: BF16 -> F32 over the fc2 rows",
          {Read("src", Dtype::kBF16, "experts*rows"), Write("dst", Dtype::kF32, "experts*h_pad"),
           Scalar("experts"), Scalar("rows"), Scalar("h_pad")},
          Fc2Rows()),
  };
}

std::vector<KernelSpec> Build() {
  std::vector<KernelSpec> v = MxfpRows();
  v.push_back(Row(
      KernelId::kMxfp4Dequant, "mxfp4_dequant",
      "MXFP4 blocks and E8M0 scales (checkpoint layout) -> BF16, rows x cols elements",
      {Read("blocks", Dtype::kU8, "rows*(cols/2)"), Read("scales", Dtype::kU8, "rows*(cols/32)"),
       Write("dst", Dtype::kBF16, "rows*cols"), Scalar("rows"), Scalar("cols")},
      {{"cols % 32 == 0", "a row is whole 32-element MXFP4 groups"}}));
  v.push_back(Row(KernelId::kMxfp4ExpertsBf16, "mxfp4_experts_bf16",
                  "MXFP4 expert blocks and E8M0 scales (checkpoint layout) -> BF16 in "
                  "transformers' layout: dequantized, then the last two axes swapped",
                  {Read("blocks", Dtype::kU8, "experts*rows*(cols/2)"),
                   Read("scales", Dtype::kU8, "experts*rows*(cols/32)"),
                   Write("dst", Dtype::kBF16, "experts*cols*rows"), Scalar("experts"),
                   Scalar("rows"), Scalar("cols")},
                  {{"cols % 32 == 0", "a row is whole 32-element MXFP4 groups"},
                   kExperts,
                   {"rows * cols <= 2147483647",
                    "an expert's elements are indexed with 32-bit "
                    "integers"}}));
  v.push_back(
      Row(KernelId::kFp8BlockBf16, "fp8_block_bf16",
          "FP8 E4M3 weights with block scales (weight_scale_inv, as DeepSeek-V3 ships) -> BF16",
          {Read("src", Dtype::kF8E4M3, "rows*cols"),
           Read("scales", Dtype::kF32, "ceil_div(rows, block_rows)*ceil_div(cols, block_cols)"),
           Write("dst", Dtype::kBF16, "rows*cols"), Scalar("rows"), Scalar("cols"),
           Scalar("block_rows"), Scalar("block_cols")},
          {{"block_rows >= 1", "a scale covers a block of at least one row"},
           {"block_cols >= 1", "a scale covers a block of at least one column"},
           {"rows * cols <= 2147483647", "elements are indexed with 32-bit integers"}}));
  v.push_back(Row(KernelId::kCopy, "copy", "n bytes from src to dst",
                  {Read("src", Dtype::kU8, "n"), Write("dst", Dtype::kU8, "n"), Scalar("n")}, {}));
  v.push_back(Row(KernelId::kCastBf16F32, "cast_bf16_f32", "n BF16 values widened to F32 (exact)",
                  {Read("src", Dtype::kBF16, "n"), Write("dst", Dtype::kF32, "n"), Scalar("n")},
                  {}));
  std::sort(v.begin(), v.end(),
            [](const KernelSpec& a, const KernelSpec& b) { return a.name < b.name; });
  if (v.size() != kKernelCount) std::abort();
  for (size_t i = 0; i < v.size(); ++i) {
    if (static_cast<size_t>(v[i].id) != i) std::abort();  // KernelId is in name order
  }
  return v;
}

const std::vector<KernelSpec>& Table() {
  static const std::vector<KernelSpec> kTable = Build();
  return kTable;
}

}  // namespace

std::span<const KernelSpec> Kernels() { return Table(); }

const KernelSpec* FindKernel(std::string_view name) {
  const std::vector<KernelSpec>& t = Table();
  auto it = std::lower_bound(t.begin(), t.end(), name, [](const KernelSpec& k, std::string_view n) {
    return std::string_view(k.name) < n;
  });
  return it != t.end() && it->name == name ? &*it : nullptr;
}

const KernelSpec& Spec(KernelId id) { return Table()[static_cast<size_t>(id)]; }

std::string_view KernelName(KernelId id) { return Spec(id).name; }

const ParamSpec* FindParam(const KernelSpec& k, std::string_view name) {
  for (const ParamSpec& p : k.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace loadplan::kernels
