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
      for (const std::string& v : verifier::Variables(*p.extent))
        EXPECT_TRUE(scalar(v)) << k.name << " " << v;
    }
    for (const Precondition& p : k.preconditions) {
      EXPECT_TRUE(scalar(p.subject)) << k.name << ": " << p.text;
      EXPECT_FALSE(p.why.empty()) << p.text;
      for (const std::string& v : verifier::Variables(p.lhs + p.rhs))
        EXPECT_TRUE(scalar(v)) << k.name << " " << v;
    }
  }
  const ParamSpec* dst = FindParam(Spec(KernelId::kMxfp4Fc1Weight), "dst");
  ASSERT_NE(dst, nullptr);
  EXPECT_EQ(dst->access, Access::kWrite);
  EXPECT_EQ(dst->dtype, base::Dtype::kU8);
  EXPECT_EQ(verifier::ToString(*dst->extent), "experts * 2 * i_pad * (k_pad / 2)");
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
  verifier::Assignment at = {
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
    case KernelId::kMxfp4Dequant: return {{"rows", 3}, {"cols", 64}};
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
    const verifier::Assignment at(scalars.begin(), scalars.end());
    ASSERT_TRUE(Violated(k, at).empty()) << k.name;
    std::map<std::string, std::vector<uint8_t>> memory;
    KernelArgs args;
    args.scalars.insert(scalars.begin(), scalars.end());
    uint64_t seed = 1;
    for (const ParamSpec& p : k.params) {
      if (p.access == Access::kScalar) continue;
      const int64_t elems = *verifier::Evaluate(*p.extent, at).value;
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

}  // namespace
}  // namespace loadplan::kernels
