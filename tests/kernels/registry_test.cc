// The kernel registry: the table is sorted and well-formed, ids index it, preconditions
// parse and evaluate, and every registry kernel has a CPU reference that runs it.
#include "kernels/registry/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "kernels/registry/precondition.h"
#include "kernels/reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using base::Access;

TEST(Registry, SortedByNameAndIndexedById) {
  ASSERT_EQ(Kernels().size(), kKernelCount);
  for (size_t i = 0; i < Kernels().size(); ++i) {
    const KernelSpec& k = Kernels()[i];
    EXPECT_EQ(static_cast<size_t>(k.id), i) << k.name;
    EXPECT_EQ(&Spec(k.id), &k);
    EXPECT_EQ(FindKernel(k.name), &k);
    EXPECT_EQ(KernelName(k.id), k.name);
    EXPECT_FALSE(k.doc.empty()) << k.name;
    if (i > 0) {
      EXPECT_LT(Kernels()[i - 1].name, k.name);
    }
    for (size_t j = 1; j < k.params.size(); ++j)
      EXPECT_LT(k.params[j - 1].name, k.params[j].name) << k.name;
  }
  EXPECT_EQ(FindKernel("nope"), nullptr);
  EXPECT_EQ(FindKernel("mxfp4_fc3_weight"), nullptr);
}

// Extents and preconditions name only the kernel's scalars; buffers have dtype and extent.
TEST(Registry, ContractsAreWellFormed) {
  for (const KernelSpec& k : Kernels()) {
    const auto scalar = [&](const std::string& n) {
      const ParamSpec* p = FindParam(k, n);
      return p != nullptr && p->access == Access::kScalar;
    };
    for (const ParamSpec& p : k.params) {
      if (p.access == Access::kScalar) {
        EXPECT_FALSE(p.dtype || p.extent) << k.name << "." << p.name;
        continue;
      }
      ASSERT_TRUE(p.dtype && p.extent) << k.name << "." << p.name;
      for (const std::string& v : expr::Variables(*p.extent))
        EXPECT_TRUE(scalar(v)) << k.name << " " << v;
    }
    for (const Precondition& p : k.preconditions) {
      EXPECT_TRUE(scalar(p.subject)) << k.name << ": " << p.text;
      EXPECT_FALSE(p.why.empty()) << p.text;
      for (const std::string& v : expr::Variables(p.lhs + p.rhs))
        EXPECT_TRUE(scalar(v)) << k.name << " " << v;
    }
  }
  const ParamSpec* dst = FindParam(Spec(KernelId::kMxfp4Fc1Weight), "dst");
  ASSERT_NE(dst, nullptr);
  EXPECT_EQ(dst->access, Access::kWrite);
  EXPECT_EQ(dst->dtype, base::Dtype::kU8);
  EXPECT_EQ(expr::ToString(*dst->extent), "experts * 2 * i_pad * (k_pad / 2)");
}

// The two dequant-to-BF16 rows are a contract another importer emits calls against: names,
// access, dtype and the extent trees exactly as it writes them (P9 compares trees).
struct Expected {
  std::string name;
  Access access;
  std::optional<base::Dtype> dtype;
  std::string extent;  // "" for a scalar
};

void ExpectContract(KernelId id, const std::vector<Expected>& want,
                    const std::vector<std::string>& preconditions) {
  const KernelSpec& k = Spec(id);
  ASSERT_EQ(k.params.size(), want.size()) << k.name;
  for (size_t i = 0; i < want.size(); ++i) {
    const ParamSpec& p = k.params[i];
    EXPECT_EQ(p.name, want[i].name) << k.name;
    EXPECT_EQ(p.access, want[i].access) << k.name << "." << p.name;
    EXPECT_EQ(p.dtype, want[i].dtype) << k.name << "." << p.name;
    if (want[i].extent.empty()) {
      EXPECT_FALSE(p.extent.has_value()) << k.name << "." << p.name;
    } else {
      const base::Result<expr::Expr> e = expr::ParseExpr(want[i].extent);
      ASSERT_TRUE(e.ok()) << want[i].extent;
      EXPECT_EQ(p.extent, *e) << k.name << "." << p.name;
    }
  }
  std::vector<std::string> texts;
  for (const Precondition& p : k.preconditions) texts.push_back(p.text);
  EXPECT_EQ(texts, preconditions) << k.name;
}

TEST(Registry, DequantToBf16ContractsAreExact) {
  using base::Dtype;
  const Access r = Access::kRead, w = Access::kWrite, s = Access::kScalar;
  ExpectContract(KernelId::kMxfp4ExpertsBf16,
                 {{"blocks", r, Dtype::kU8, "experts*rows*(cols/2)"},
                  {"cols", s, std::nullopt, ""},
                  {"dst", w, Dtype::kBF16, "experts*cols*rows"},
                  {"experts", s, std::nullopt, ""},
                  {"rows", s, std::nullopt, ""},
                  {"scales", r, Dtype::kU8, "experts*rows*(cols/32)"}},
                 {"experts >= 0", "rows >= 0", "cols >= 0", "cols % 32 == 0", "experts <= 65535",
                  "rows * cols <= 2147483647"});
  ExpectContract(
      KernelId::kFp8BlockBf16,
      {{"block_cols", s, std::nullopt, ""},
       {"block_rows", s, std::nullopt, ""},
       {"cols", s, std::nullopt, ""},
       {"dst", w, Dtype::kBF16, "rows*cols"},
       {"rows", s, std::nullopt, ""},
       {"scales", r, Dtype::kF32, "ceil_div(rows, block_rows)*ceil_div(cols, block_cols)"},
       {"src", r, Dtype::kF8E4M3, "rows*cols"}},
      {"rows >= 0", "cols >= 0", "block_rows >= 0", "block_cols >= 0", "block_rows >= 1",
       "block_cols >= 1", "rows * cols <= 2147483647"});
  // DeepSeek-V3's 128x128 blocks over a 300 x 200 matrix: 3 x 2 scales (partial blocks).
  const expr::Assignment at = {
      {"rows", 300}, {"cols", 200}, {"block_rows", 128}, {"block_cols", 128}};
  EXPECT_EQ(expr::ValueAt(*FindParam(Spec(KernelId::kFp8BlockBf16), "scales")->extent, at), 6);
}

TEST(Preconditions, ParseEveryComparison) {
  const std::map<std::string, Compare> cases = {{"a == b", Compare::kEq},
                                                {"a <= b", Compare::kLe},
                                                {"a < b", Compare::kLt},
                                                {"a >= b", Compare::kGe},
                                                {"a > b", Compare::kGt}};
  for (const auto& [text, cmp] : cases) {
    const std::optional<Precondition> p = ParsePrecondition(text, "why");
    ASSERT_TRUE(p.has_value()) << text;
    EXPECT_EQ(p->cmp, cmp) << text;
    EXPECT_EQ(p->subject, "a");
    EXPECT_EQ(std::string("a ") + std::string(CompareText(cmp)) + " b", text);
  }
  EXPECT_FALSE(ParsePrecondition("a + b", "no comparison"));
  EXPECT_FALSE(ParsePrecondition("a <= b <= c", "two"));
  EXPECT_FALSE(ParsePrecondition("a* <= b", "lhs does not parse"));
  const std::optional<Precondition> p = ParsePrecondition("2 <= rows / 2", "constant first");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->subject, "rows");
}

TEST(Preconditions, ViolatedNamesEachBrokenOne) {
  const KernelSpec& k = Spec(KernelId::kMxfp4Fc1Weight);
  expr::Assignment at = {
      {"experts", 2}, {"rows", 192}, {"cols", 48}, {"i_pad", 128}, {"k_pad", 128}};
  EXPECT_TRUE(Violated(k, at).empty());
  at["k_pad"] = 100;  // not a multiple of 128 (cols = 48 still fits 100 / 2)
  std::vector<std::string> texts;
  for (const Precondition* p : Violated(k, at)) texts.push_back(p->text);
  EXPECT_EQ(texts, (std::vector<std::string>{"k_pad % 128 == 0"}));
  at = {{"experts", 70000}, {"rows", 191}, {"cols", 48}, {"i_pad", 128}, {"k_pad", 128}};
  texts.clear();
  for (const Precondition* p : Violated(k, at)) texts.push_back(p->text);
  EXPECT_EQ(texts, (std::vector<std::string>{"experts <= 65535", "rows % 2 == 0"}));
  at.erase("cols");  // unbound: does not evaluate, so it is not known to hold
  EXPECT_FALSE(Holds(k.preconditions.back(), at).has_value());
  EXPECT_EQ(Violated(Spec(KernelId::kCopy), {{"n", -1}}).size(), 1u);
  EXPECT_TRUE(Violated(Spec(KernelId::kCopy), {{"n", 0}}).empty());
}

// Small valid scalars per kernel: one arm per KernelId, so a new kernel needs a case here.
std::map<std::string, int64_t> SmallCall(KernelId id) {
  switch (id) {
    case KernelId::kCastBf16F32:
    case KernelId::kCopy: return {{"n", 40}};
    case KernelId::kFp8BlockBf16:
      return {{"rows", 5}, {"cols", 7}, {"block_rows", 2}, {"block_cols", 3}};
    case KernelId::kMxfp4Dequant: return {{"rows", 3}, {"cols", 64}};
    case KernelId::kMxfp4ExpertsBf16: return {{"experts", 2}, {"rows", 3}, {"cols", 64}};
    case KernelId::kMxfp4Fc1Bias: return {{"experts", 2}, {"rows", 100}, {"i_pad", 128}};
    case KernelId::kMxfp4Fc1Scales:
    case KernelId::kMxfp4Fc1Weight:
      return {{"experts", 2}, {"rows", 100}, {"cols", 3}, {"i_pad", 128}, {"k_pad", 128}};
    case KernelId::kMxfp4Fc2Bias: return {{"experts", 2}, {"rows", 100}, {"h_pad", 128}};
    case KernelId::kMxfp4Fc2Scales:
    case KernelId::kMxfp4Fc2Weight:
      return {{"experts", 2}, {"rows", 100}, {"cols", 3}, {"h_pad", 128}, {"i_pad", 128}};
  }
  return {};
}

// Every registry kernel has a reference: a valid call with random inputs runs and
// writes its dst (a dst of 0xA5 bytes comes back changed).
TEST(Registry, EveryKernelHasAReferenceThatRuns) {
  for (const KernelSpec& k : Kernels()) {
    const std::map<std::string, int64_t> scalars = SmallCall(k.id);
    const expr::Assignment at(scalars.begin(), scalars.end());
    ASSERT_TRUE(Violated(k, at).empty()) << k.name;
    std::map<std::string, std::vector<uint8_t>> memory;
    KernelArgs args;
    args.scalars.insert(scalars.begin(), scalars.end());
    uint64_t seed = 1;
    for (const ParamSpec& p : k.params) {
      if (p.access == Access::kScalar) continue;
      const int64_t elems = *expr::ValueAt(*p.extent, at);
      const uint64_t bytes = static_cast<uint64_t>(elems) * base::DtypeBits(*p.dtype) / 8;
      memory[p.name] = p.access == Access::kWrite ? std::vector<uint8_t>(bytes, 0xA5)
                                                  : testing::RandomBytes(bytes, ++seed);
      args.buffers[p.name] = {memory[p.name].data(), bytes};
    }
    const Status s = RunReference(k.name, args);
    ASSERT_TRUE(s.ok()) << k.name << ": " << s.message();
    const std::vector<uint8_t>& dst = memory["dst"];
    ASSERT_FALSE(dst.empty()) << k.name;
    EXPECT_TRUE(std::any_of(dst.begin(), dst.end(), [](uint8_t b) { return b != 0xA5; })) << k.name;
  }
}

// A refusal names the first broken precondition with the values it reads.
TEST(Registry, ResolveReportsTheBrokenPrecondition) {
  std::vector<uint8_t> src(1 << 12), dst(1 << 14);
  const Status s =
      RunReference("mxfp4_dequant", testing::MakeArgs(src.data(), src.size(), dst.data(),
                                                      dst.size(), {{"rows", 2}, {"cols", 48}}));
  EXPECT_EQ(s.message(), "mxfp4_dequant: missing buffer argument `blocks`");
  KernelArgs dq;
  dq.buffers = {
      {"blocks", {src.data(), 48}}, {"scales", {src.data() + 48, 3}}, {"dst", {dst.data(), 192}}};
  dq.scalars = {{"rows", 2}, {"cols", 48}};
  EXPECT_EQ(RunReference("mxfp4_dequant", dq).message(),
            "mxfp4_dequant: cols % 32 == 0 does not hold at cols = 48 (a row is whole 32-element "
            "MXFP4 groups)");
}

TEST(Registry, DequantToBf16RefusalsNameThePrecondition) {
  std::vector<uint8_t> in(1 << 12), out(1 << 14);
  const auto args = [&](std::initializer_list<const char*> reads, const testing::Scalars& s) {
    KernelArgs a;
    uint64_t off = 0;
    for (const char* n : reads) {
      a.buffers[n] = {in.data() + off, 1024};
      off += 1024;
    }
    a.buffers["dst"] = {out.data(), out.size()};
    for (const auto& [n, v] : s) a.scalars[n] = v;
    return a;
  };
  EXPECT_EQ(RunReference("fp8_block_bf16",
                         args({"src", "scales"},
                              {{"rows", 4}, {"cols", 4}, {"block_rows", 0}, {"block_cols", 2}}))
                .message(),
            "fp8_block_bf16: block_rows >= 1 does not hold at block_rows = 0 (a scale covers a "
            "block of at least one row)");
  EXPECT_EQ(
      RunReference("fp8_block_bf16",
                   args({"src", "scales"},
                        {{"rows", 65536}, {"cols", 32768}, {"block_rows", 1}, {"block_cols", 1}}))
          .message(),
      "fp8_block_bf16: rows * cols <= 2147483647 does not hold at cols = 32768, rows = 65536 "
      "(elements are indexed with 32-bit integers)");
  EXPECT_EQ(RunReference("mxfp4_experts_bf16",
                         args({"blocks", "scales"}, {{"experts", 1}, {"rows", 2}, {"cols", 48}}))
                .message(),
            "mxfp4_experts_bf16: cols % 32 == 0 does not hold at cols = 48 (a row is whole "
            "32-element MXFP4 groups)");
  EXPECT_EQ(
      RunReference("mxfp4_experts_bf16",
                   args({"blocks", "scales"}, {{"experts", 65536}, {"rows", 0}, {"cols", 32}}))
          .message(),
      "mxfp4_experts_bf16: experts <= 65535 does not hold at experts = 65536 (experts is a "
      "CUDA grid dimension)");
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](uint8_t b) { return b == 0; }));
}

}  // namespace
}  // namespace loadplan::kernels
