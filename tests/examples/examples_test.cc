// Tests of the example manifests: the committed JSON is exactly what the builder
// makes, every example verifies clean, and the sizes match the MXFP4 recipe (docs/kernels.md).
#include "examples/examples.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "builders/kernels.h"
#include "verifier/codes.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::examples {
namespace {

namespace fs = std::filesystem;
using base::Dtype;
using verifier::BufferKind;
using verifier::Expr;
using verifier::Manifest;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path Committed(const std::string& name) {
  return fs::path(LOADPLAN_SOURCE_DIR) / "examples" / (name + ".json");
}

// LOADPLAN_UPDATE_EXAMPLES=1 rewrites the committed files instead (then review the diff).
TEST(Examples, CommittedFilesAreRegeneratedByteForByte) {
  if (std::getenv("LOADPLAN_UPDATE_EXAMPLES")) {
    ASSERT_EQ(RegenerateExamples((fs::path(LOADPLAN_SOURCE_DIR) / "examples").string()), 0);
  }
  const fs::path dir = fs::path(testing::TempDir()) / "loadplan_examples_regen";
  fs::create_directories(dir);
  ASSERT_EQ(RegenerateExamples(dir.string()), 0);
  for (const auto& name : ExampleNames()) {
    const std::string fresh = ReadAll(dir / (name + ".json"));
    ASSERT_FALSE(fresh.empty()) << name;
    EXPECT_TRUE(fresh == ReadAll(Committed(name)))
        << name
        << ".json is stale: rerun this test with LOADPLAN_UPDATE_EXAMPLES=1 (see "
           "examples/README.md)";
  }
}

TEST(Examples, EveryExampleChecksCleanWithNoWarnings) {
  for (const auto& name : ExampleNames()) {
    verifier::CheckOutput out = verifier::CheckText(ReadAll(Committed(name)));
    ASSERT_TRUE(out.parsed) << name;
    for (const auto& d : out.result.diags)
      ADD_FAILURE() << name << ": " << d.code << " " << d.pointer << " " << d.message;
    ASSERT_TRUE(out.manifest != nullptr);
    EXPECT_EQ(*out.manifest, BuildExample(name).manifest)
        << name << ": the text does not parse back to the model";
  }
}

TEST(Examples, UnknownNameAndUnwritableDirFail) {
  EXPECT_FALSE(BuildExample("nope").ok());
  EXPECT_EQ(ExampleText("nope"), "");
  EXPECT_EQ(RegenerateExamples("/nonexistent/dir/for/loadplan"), 1);
}

int64_t Eval(const Expr& e) { return verifier::ValueAt(e, {}).value_or(-1); }

std::vector<int64_t> Shape(const Manifest& m, std::string_view name) {
  std::vector<int64_t> out;
  if (const auto* b = m.FindBuffer(name)) {
    for (const auto& d : b->shape) out.push_back(Eval(d));
  }
  return out;
}

TEST(Examples, GptOssExpertShapesFollowTheDesign) {
  verifier::BuildResult r = GptOss();
  ASSERT_TRUE(r.ok());
  const Manifest& m = r.manifest;
  using V = std::vector<int64_t>;
  EXPECT_EQ(Shape(m, "l0.fc1_w.raw"), (V{128, 5760, 90, 16}));
  EXPECT_EQ(Shape(m, "l0.fc1_s.raw"), (V{128, 5760, 90}));
  EXPECT_EQ(Shape(m, "l0.fc2_w.raw"), (V{128, 2880, 90, 16}));
  EXPECT_EQ(Shape(m, "l35.fc1_w"), (V{128, 5888, 1472}));
  EXPECT_EQ(Shape(m, "l35.fc1_s"), (V{128, 5888, 92}));
  EXPECT_EQ(Shape(m, "l35.fc1_b"), (V{128, 5888}));
  EXPECT_EQ(Shape(m, "l35.fc2_w"), (V{128, 2944, 1472}));
  EXPECT_EQ(Shape(m, "l35.fc2_s"), (V{128, 2944, 92}));
  EXPECT_EQ(Shape(m, "l35.fc2_b"), (V{128, 2944}));
  EXPECT_EQ(m.FindBuffer("l35.fc2_b")->dtype, Dtype::kF32);
  EXPECT_EQ(m.FindBuffer("l0.fc1_b.raw")->dtype, Dtype::kBF16);
  EXPECT_EQ(m.FindBuffer("l0.fc1_w.raw")->encoding, "fp4_e2m1x2");
  EXPECT_EQ(m.FindBuffer("l0.fc1_s.raw")->encoding, "e8m0");
  EXPECT_EQ(m.FindBuffer("l7.fc2_s.raw")->tensor, "model.layers.7.mlp.experts.down_proj_scales");
}

// The builder's rule decided every kind: exactly the six expert tensors per layer are sources.
TEST(Examples, GptOssExpertTensorsAreSourcesAndTheRestWeights) {
  const Manifest m = GptOss().manifest;
  int sources = 0, weights = 0;
  for (const auto& b : m.buffers) {
    if (!b.tensor) continue;
    const bool expert = b.tensor->find(".mlp.experts.") != std::string::npos;
    EXPECT_EQ(b.kind, expert ? BufferKind::kSource : BufferKind::kWeight) << b.name;
    (b.kind == BufferKind::kSource ? sources : weights)++;
  }
  EXPECT_EQ(sources, 36 * 6);
  EXPECT_EQ(weights, 3 + 36 * 13);
  EXPECT_EQ(m.load.lanes, 4u);
  EXPECT_EQ(m.load.prefetch, 1u);
}

TEST(Examples, ScaledGptOssVerifiesClean) {
  for (int layers : {1, 2, 8}) {
    verifier::BuildResult r = GptOss({.name = "gpt-oss-scaled", .layers = layers});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.manifest.programs.size(), 1u + 6u * layers);
    verifier::VerifyResult v = verifier::Verify(r.manifest);
    EXPECT_TRUE(v.diags.empty()) << layers << " layers: " << v.diags.front().code << " "
                                 << v.diags.front().pointer;
    EXPECT_EQ(v.derive_order.size(), 6u * layers);
  }
  EXPECT_FALSE(GptOss({.hidden = 2890}).ok());  // not a multiple of 32
}

uint64_t SourceBytes(const Manifest& m) {
  uint64_t total = 0;
  for (const auto& b : m.buffers) {
    if (b.kind == BufferKind::kSource) total += static_cast<uint64_t>(Eval(verifier::ByteSize(b)));
  }
  return total;
}

// ~188 GB of experts: fits one 288 GB device once, not twice (docs/kernels.md, gpt-oss-120b).
TEST(Examples, K3StageHoldsAbout188GBOfExperts) {
  verifier::BuildResult r = K3Stage();
  ASSERT_TRUE(r.ok());
  const uint64_t bytes = SourceBytes(r.manifest);
  EXPECT_GT(bytes, 186'000'000'000u);
  EXPECT_LT(bytes, 190'000'000'000u);
  EXPECT_GT(2 * bytes, 288'000'000'000u);
  EXPECT_EQ(Shape(r.manifest, "l20.fc1_w"), (std::vector<int64_t>{384, 4096, 3584}));
  EXPECT_TRUE(K3Stage({.layers = 1}).ok());
  EXPECT_TRUE(verifier::Verify(K3Stage({.first_layer = 21, .layers = 1}).manifest).diags.empty());
}

TEST(Examples, TinyHasOneOfEachStagedKind) {
  const Manifest m = Tiny().manifest;
  std::map<BufferKind, int> kinds;
  for (const auto& b : m.buffers) kinds[b.kind]++;
  EXPECT_EQ(kinds[BufferKind::kSource], 2);
  EXPECT_EQ(kinds[BufferKind::kWeight], 1);
  EXPECT_EQ(kinds[BufferKind::kCarry], 1);
  EXPECT_EQ(kinds[BufferKind::kState], 1);
  EXPECT_EQ(m.vars.size(), 1u);
  const std::string text = ExampleText("tiny");
  EXPECT_LE(std::count(text.begin(), text.end(), '\n'), 150);
}

// The clean check above is meaningful: a one-element change to an example draws the rule.
TEST(Examples, BrokenGptOssDrawsBoundsAndFinding3Diagnostics) {
  Manifest m = GptOss({.layers = 1}).manifest;
  for (auto& b : m.buffers) {
    if (b.name == "l0.fc1_w") b.shape[2] = Expr::Const(1471);
    if (b.name == "l0.fc2_s.raw") b.kind = BufferKind::kWeight;
  }
  std::set<std::pair<std::string, std::string>> got;
  for (const auto& d : verifier::Verify(m).diags) got.emplace(d.code, d.pointer);
  EXPECT_TRUE(got.contains(
      {std::string(verifier::codes::kExtent), "/programs/derive.l0.fc1_w/calls/0/args/dst"}))
      << got.size();
  EXPECT_TRUE(
      got.contains({std::string(verifier::codes::kWeightOnlyDerive), "/buffers/l0.fc2_s.raw"}))
      << got.size();
}

TEST(Examples, GptOssTextStaysSmall) {
  EXPECT_LT(ExampleText("gpt-oss-120b").size(), size_t{3} << 19);
}

// The standard contracts at gpt-oss's scalars give the recipe's element counts (docs/kernels.md).
TEST(Kernels, MxfpContractsMatchDesignShapes) {
  const auto kernels = builders::StandardKernels();
  const verifier::Assignment fc1 = {
      {"experts", 128}, {"rows", 5760}, {"cols", 1440}, {"i_pad", 2944}, {"k_pad", 2944}};
  auto extent = [&](std::string_view k, std::string_view p, const verifier::Assignment& at) {
    for (const auto& kernel : kernels) {
      if (kernel.name != k) continue;
      const auto* param = verifier::FindParam(kernel, p);
      if (param && param->extent) return verifier::ValueAt(*param->extent, at).value_or(-1);
    }
    return int64_t{-1};
  };
  EXPECT_EQ(extent("mxfp4_fc1_weight", "src", fc1), 128LL * 5760 * 90 * 16);
  EXPECT_EQ(extent("mxfp4_fc1_weight", "dst", fc1), 128LL * 5888 * 1472);
  EXPECT_EQ(extent("mxfp4_fc1_scales", "dst", fc1), 128LL * 5888 * 92);
  EXPECT_EQ(extent("mxfp4_fc1_bias", "dst", fc1), 128LL * 5888);
  const verifier::Assignment fc2 = {
      {"experts", 128}, {"rows", 2880}, {"cols", 1440}, {"h_pad", 2944}, {"i_pad", 2944}};
  EXPECT_EQ(extent("mxfp4_fc2_weight", "dst", fc2), 128LL * 2944 * 1472);
  EXPECT_EQ(extent("mxfp4_fc2_scales", "dst", fc2), 128LL * 2944 * 92);
  EXPECT_EQ(extent("mxfp4_fc2_bias", "dst", fc2), 128LL * 2944);
  // transformers' layout: gate_up_proj_blocks [128, 5760, 90, 16] -> BF16 [128, 2880, 5760].
  const verifier::Assignment ex = {{"experts", 128}, {"rows", 5760}, {"cols", 2880}};
  EXPECT_EQ(extent("mxfp4_experts_bf16", "blocks", ex), 128LL * 5760 * 90 * 16);
  EXPECT_EQ(extent("mxfp4_experts_bf16", "scales", ex), 128LL * 5760 * 90);
  EXPECT_EQ(extent("mxfp4_experts_bf16", "dst", ex), 128LL * 2880 * 5760);
  // DeepSeek-V3 q_b_proj [24576, 1536] with weight_scale_inv [192, 12]; a partial block row.
  const verifier::Assignment fp8 = {
      {"rows", 24576}, {"cols", 1536}, {"block_rows", 128}, {"block_cols", 128}};
  EXPECT_EQ(extent("fp8_block_bf16", "scales", fp8), 192 * 12);
  EXPECT_EQ(extent("fp8_block_bf16", "scales",
                   {{"rows", 300}, {"cols", 200}, {"block_rows", 128}, {"block_cols", 128}}),
            3 * 2);
  EXPECT_EQ(kernels.size(), 17u);
  EXPECT_TRUE(std::is_sorted(kernels.begin(), kernels.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

// `loadplan example NAME --layers N`: the N-layer version, named for its size.
bool HasTensorOfLayer(const Manifest& m, int layer) {
  const std::string part = "layers." + std::to_string(layer) + ".";
  return std::any_of(m.buffers.begin(), m.buffers.end(), [&](const verifier::Buffer& b) {
    return b.tensor && b.tensor->find(part) != std::string::npos;
  });
}

TEST(BuildExample, LayersParameter) {
  for (const std::string name : {"gpt-oss-120b", "k3-stage"}) {
    EXPECT_TRUE(ExampleHasLayers(name));
    const verifier::BuildResult built = BuildExample(name, 3);
    ASSERT_TRUE(built.ok()) << name;
    EXPECT_EQ(built.manifest.name, name + "-3l");
    EXPECT_TRUE(HasTensorOfLayer(built.manifest, 2)) << name;
    EXPECT_FALSE(HasTensorOfLayer(built.manifest, 3)) << name;
  }
  // Without layers: the committed example itself.
  EXPECT_EQ(verifier::WriteManifest(BuildExample("tiny", std::nullopt).manifest),
            verifier::WriteManifest(BuildExample("tiny").manifest));
  EXPECT_FALSE(ExampleHasLayers("tiny"));
  const verifier::BuildResult tiny = BuildExample("tiny", 2);
  EXPECT_FALSE(tiny.ok());
  ASSERT_EQ(tiny.errors.size(), 1u);
  EXPECT_EQ(tiny.errors[0], "example `tiny` has no layer count");
  EXPECT_FALSE(BuildExample("nope", 2).ok());
  EXPECT_FALSE(BuildExample("nope", std::nullopt).ok());
}

}  // namespace
}  // namespace loadplan::examples
