// Tests of the manifest builder: kinds decided by use (finding 3), sorting,
// pointers, argument resolution and misuse reported as errors.
#include "verifier/builder.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "verifier/codes.h"
#include "verifier/verify.h"

namespace loadplan::verifier {
namespace {

KernelSpec CopyKernel() {
  return {"copy",
          {ReadParam("src", base::Dtype::kU8, "n"), WriteParam("dst", base::Dtype::kU8, "n"),
           ScalarParam("n")}};
}

// raw -> (derive) -> carry; `also_serving` makes a serving program read raw too.
ManifestBuilder Staged(bool also_serving) {
  ManifestBuilder b("t");
  b.Var("batch", 1, 4).AddKernel(CopyKernel());
  b.Checkpoint("raw", "model.raw", base::Dtype::kU8, {64});
  b.Carry("prepped", base::Dtype::kU8, {64});
  b.Scratch("tmp", base::Dtype::kU8, {64});
  b.AddDerive("derive.prep").Call("copy", {{"src", "raw"}, {"dst", "prepped"}, {"n", 64}}, {1});
  auto& serve = b.AddProgram("serve").Batch("batch");
  serve.Call("copy", {{"src", "prepped"}, {"dst", "tmp"}, {"n", 64}}, {"batch"});
  if (also_serving) serve.Call("copy", {{"src", "raw"}, {"dst", "tmp"}, {"n", 64}}, {"batch"});
  return b;
}

const Buffer& Buf(const Manifest& m, std::string_view name) {
  const Buffer* b = m.FindBuffer(name);
  EXPECT_NE(b, nullptr) << name;
  static const Buffer kNone;
  return b ? *b : kNone;
}

TEST(Builder, RawReadOnlyByDeriveIsSource) {
  BuildResult r = Staged(false).Build();
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(Buf(r.manifest, "raw").kind, BufferKind::kSource);
  EXPECT_EQ(Buf(r.manifest, "raw").tensor, "model.raw");
  EXPECT_EQ(Buf(r.manifest, "prepped").kind, BufferKind::kCarry);
  EXPECT_FALSE(Buf(r.manifest, "prepped").tensor.has_value());
}

TEST(Builder, RawAlsoReadByServingIsWeight) {
  BuildResult r = Staged(true).Build();
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(Buf(r.manifest, "raw").kind, BufferKind::kWeight);
}

// CheckpointParts: a list of whole tensors, its kind decided by use as for Checkpoint.
TEST(Builder, CheckpointPartsKeepTheirListAndAreSourcesOrWeightsByUse) {
  for (const bool also_serving : {false, true}) {
    ManifestBuilder b("t");
    b.Var("batch", 1, 4).AddKernel(CopyKernel());
    b.CheckpointParts("raw", {"model.e.1", "model.e.0"}, base::Dtype::kU8, {2, 32});
    b.Carry("prepped", base::Dtype::kU8, {64});
    b.Scratch("tmp", base::Dtype::kU8, {64});
    b.AddDerive("derive.prep").Call("copy", {{"src", "raw"}, {"dst", "prepped"}, {"n", 64}}, {1});
    auto& serve = b.AddProgram("serve").Batch("batch");
    serve.Call("copy", {{"src", "prepped"}, {"dst", "tmp"}, {"n", 64}}, {"batch"});
    if (also_serving) serve.Call("copy", {{"src", "raw"}, {"dst", "tmp"}, {"n", 64}}, {"batch"});
    BuildResult r = b.Build();
    ASSERT_TRUE(r.ok()) << r.errors.front();
    const Buffer& raw = Buf(r.manifest, "raw");
    EXPECT_EQ(raw.kind, also_serving ? BufferKind::kWeight : BufferKind::kSource);
    EXPECT_FALSE(raw.tensor.has_value());
    EXPECT_EQ(raw.tensors, (std::vector<std::string>{"model.e.1", "model.e.0"}));  // list order
    EXPECT_EQ(raw.dtype, base::Dtype::kU8);
    EXPECT_EQ(raw.shape, (std::vector<Expr>{Expr::Const(2), Expr::Const(32)}));
    EXPECT_FALSE(Buf(r.manifest, "prepped").tensors.has_value());
    EXPECT_TRUE(Verify(r.manifest).diags.empty());
  }
}

TEST(Builder, UnreadWrittenOrCollectiveCheckpointIsWeight) {
  ManifestBuilder b = Staged(false);
  b.Checkpoint("unread", "model.unread", base::Dtype::kU8, {8});
  b.Checkpoint("written", "model.written", base::Dtype::kU8, {64});
  b.Checkpoint("reduced", "model.reduced", base::Dtype::kU8, {64});
  b.Checkpoint("also_reduced", "model.also_reduced", base::Dtype::kU8, {64});
  b.AddDerive("derive.w").Call("copy", {{"src", "reduced"}, {"dst", "written"}, {"n", 64}}, {1});
  b.AddDerive("derive.x")
      .Call("copy", {{"src", "also_reduced"}, {"dst", "prepped"}, {"n", 1}}, {1});
  b.AddProgram("sync").Collective("all_reduce", "also_reduced");
  BuildResult r = b.Build();
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_EQ(Buf(r.manifest, "unread").kind, BufferKind::kWeight);
  EXPECT_EQ(Buf(r.manifest, "written").kind, BufferKind::kWeight);
  EXPECT_EQ(Buf(r.manifest, "reduced").kind, BufferKind::kSource);
  EXPECT_EQ(Buf(r.manifest, "also_reduced").kind, BufferKind::kWeight);
}

TEST(Builder, SortsResolvesAndAssignsPointers) {
  BuildResult r = Staged(false).Build();
  ASSERT_TRUE(r.ok());
  const Manifest& m = r.manifest;
  std::vector<std::string> names;
  for (const auto& b : m.buffers) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"prepped", "raw", "tmp"}));
  ASSERT_EQ(m.programs.size(), 2u);
  EXPECT_EQ(m.programs[0].name, "derive.prep");
  EXPECT_TRUE(m.programs[0].derive);
  EXPECT_EQ(m.programs[1].batch, "batch");
  EXPECT_EQ(Buf(m, "raw").ptr, "/buffers/raw");
  const Call& call = m.programs[1].calls[0];
  EXPECT_EQ(call.ptr, "/programs/serve/calls/0");
  ASSERT_EQ(call.args.size(), 3u);  // sorted by parameter: dst, n, src
  EXPECT_EQ(call.args[0].buffer, "tmp");
  EXPECT_EQ(call.args[1].scalar, Expr::Const(64));
  EXPECT_EQ(call.args[2].buffer, "prepped");
  EXPECT_EQ(call.grid, std::vector<Expr>{Expr::Var("batch")});
  EXPECT_EQ(m.kernels[0].params[0].extent, Expr::Var("n"));
}

TEST(Builder, BuiltManifestVerifiesWithoutFinding3Warning) {
  for (bool also_serving : {false, true}) {
    VerifyResult v = Verify(Staged(also_serving).Build().manifest);
    EXPECT_TRUE(v.ok());
    for (const auto& d : v.diags) EXPECT_NE(d.code, codes::kWeightOnlyDerive) << d.pointer;
  }
}

// The same manifest with the kind picked by hand (the seed's generator bug) draws L1.
TEST(Builder, HandPickedWeightDrawsL1) {
  Manifest m = Staged(false).Build().manifest;
  for (auto& b : m.buffers) {
    if (b.name == "raw") b.kind = BufferKind::kWeight;
  }
  VerifyResult v = Verify(m);
  EXPECT_TRUE(std::any_of(v.diags.begin(), v.diags.end(), [](const Diagnostic& d) {
    return d.code == codes::kWeightOnlyDerive && d.pointer == "/buffers/raw";
  }));
}

bool HasError(const BuildResult& r, std::string_view fragment) {
  return std::any_of(r.errors.begin(), r.errors.end(),
                     [&](const std::string& e) { return e.find(fragment) != std::string::npos; });
}

TEST(Builder, DuplicateNamesAreErrors) {
  ManifestBuilder b = Staged(false);
  b.Var("batch", 1, 2).Carry("raw", base::Dtype::kU8, {1}).AddKernel(CopyKernel());
  b.AddProgram("serve");
  b.AddProgram("p").Call("copy", {{"n", 1}, {"n", 2}, {"src", "raw"}, {"dst", "tmp"}}, {1});
  BuildResult r = b.Build();
  EXPECT_EQ(r.errors.size(), 5u);
  EXPECT_TRUE(HasError(r, "variable `batch`"));
  EXPECT_TRUE(HasError(r, "buffer `raw`"));
  EXPECT_TRUE(HasError(r, "kernel `copy`"));
  EXPECT_TRUE(HasError(r, "program `serve`"));
  EXPECT_TRUE(HasError(r, "argument `n`"));
}

TEST(Builder, BadReferencesAndExpressionsAreErrors) {
  ManifestBuilder b = Staged(false);
  b.Scratch("bad_shape", base::Dtype::kU8, {"batch +"});
  auto& p = b.AddProgram("p");
  p.Call("copy", {{"src", "nope"}, {"dst", 3}, {"n", "(1"}, {"m", 1}}, {1});
  p.Call("kopy", {{"src", "raw"}}, {1});
  p.Collective("all_reduce", "missing");
  BuildResult r = b.Build();
  EXPECT_EQ(r.errors.size(), 7u);
  EXPECT_TRUE(HasError(r, "buffer `bad_shape` shape[0]"));
  EXPECT_TRUE(HasError(r, "unknown buffer `nope`"));
  EXPECT_TRUE(HasError(r, "buffer parameter `dst` needs a buffer name"));
  EXPECT_TRUE(HasError(r, "arg `n`: cannot parse"));
  EXPECT_TRUE(HasError(r, "has no parameter `m`"));
  EXPECT_TRUE(HasError(r, "unknown kernel `kopy`"));
  EXPECT_TRUE(HasError(r, "unknown buffer `missing`"));
}

TEST(Builder, ValueConversions) {
  EXPECT_EQ(std::get<Expr>(Value(7).ToExpr()), Expr::Const(7));
  EXPECT_EQ(std::get<Expr>(Value(uint64_t{7}).ToExpr()), Expr::Const(7));
  EXPECT_TRUE(std::holds_alternative<std::string>(Value(~uint64_t{0}).ToExpr()));
  EXPECT_EQ(std::get<Expr>(Value("batch*2").ToExpr()), Expr::Var("batch") * Expr::Const(2));
  EXPECT_TRUE(std::holds_alternative<std::string>(Value("*").ToExpr()));
}

}  // namespace
}  // namespace loadplan::verifier
