// Synthetic checkpoints: valid values per dtype, determinism, chunk independence,
// and a generated checkpoint that our reader loads and the manifest binds to.
#include <cmath>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/synthetic.h"
#include "tests/verified_plan.h"
#include "verifier/parse.h"

namespace loadplan::backend {
namespace {

using base::Dtype;

std::vector<uint8_t> Bytes(uint64_t seed, Dtype d, std::optional<std::string> enc, uint64_t off,
                           size_t n) {
  std::vector<uint8_t> v(n);
  SyntheticBytes(seed, "t", d, enc, off, v);
  return v;
}

TEST(Synthetic, Bf16AndF32AreFiniteAndNotZero) {
  const auto b = Bytes(1, Dtype::kBF16, {}, 0, 4096);
  size_t zeros = 0;
  for (size_t i = 0; i < b.size(); i += 2) {
    const uint32_t bits = uint32_t{b[i]} << 16 | uint32_t{b[i + 1]} << 24;
    float f;
    std::memcpy(&f, &bits, 4);
    ASSERT_TRUE(std::isfinite(f)) << i;
    zeros += f == 0;
  }
  EXPECT_EQ(zeros, 0u);
  const auto w = Bytes(1, Dtype::kF32, {}, 0, 4096);
  for (size_t i = 0; i < w.size(); i += 4) {
    float f;
    std::memcpy(&f, &w[i], 4);
    ASSERT_TRUE(std::isfinite(f) && std::fabs(f) < 16.f && std::fabs(f) > 1e-3f) << f;
  }
}

TEST(Synthetic, E8m0ScalesAreSane) {
  const auto s = Bytes(2, Dtype::kU8, "e8m0", 0, 4096);
  for (uint8_t x : s) ASSERT_TRUE(x >= 112 && x <= 142) << int(x);
}

RC_GTEST_PROP(Synthetic, ChunksAreIndependentOfSplit, (uint64_t seed, uint8_t split_at)) {
  const auto whole = Bytes(seed, Dtype::kBF16, {}, 40, 200);
  auto a = Bytes(seed, Dtype::kBF16, {}, 40, split_at);
  const auto b =
      Bytes(seed, Dtype::kBF16, {}, 40 + split_at, 200 - std::min<size_t>(split_at, 200));
  a.insert(a.end(), b.begin(), b.end());
  a.resize(200);
  RC_ASSERT(a == whole);
}

TEST(Synthetic, SeedChangesBytes) {
  EXPECT_NE(Bytes(1, Dtype::kU8, {}, 0, 64), Bytes(2, Dtype::kU8, {}, 0, 64));
}

TEST(Synthetic, GeneratedCheckpointLoadsAndBinds) {
  const auto parsed =
      verifier::ParseManifest(R"({"schema":1,"name":"m","vars":{},"kernels":{},"programs":{},
    "buffers":{"a":{"kind":"weight","tensor":"model.layers.10.a","dtype":"BF16","shape":[64,3]},
               "b":{"kind":"weight","tensor":"model.layers.2.b","dtype":"U8","shape":[1000],"encoding":"e8m0"},
               "c":{"kind":"weight","tensor":"model.layers.2.c","dtype":"F32","shape":[300]}}})");
  ASSERT_TRUE(parsed.manifest);
  const auto dir =
      std::filesystem::temp_directory_path() / ("lp_gen_" + std::to_string(::getpid()));
  uint64_t last = 0;
  const base::Result<GenSummary> r = GenerateCheckpoint(
      *parsed.manifest, {.dir = dir.string(),
                         .seed = 7,
                         .shard_bytes = 2500,
                         .progress = [&](uint64_t done, uint64_t) { last = done; }});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensors, 3u);
  EXPECT_EQ(r->bytes, 64u * 3 * 2 + 1000 + 1200);
  EXPECT_EQ(last, r->bytes);
  EXPECT_EQ(r->shards, 2u);  // layers.2.* (2200 B) then layers.10.a
  auto c = Checkpoint::Open(dir.string());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(CheckBindings(test_support::PlanOf(*parsed.manifest), **c).ok());
  const auto loc = (*c)->Find("model.layers.2.b");
  ASSERT_TRUE(loc.info);
  std::vector<uint8_t> expect(1000);
  SyntheticBytes(7, "model.layers.2.b", Dtype::kU8, "e8m0", 0, expect);
  const base::Result<std::vector<uint8_t>> read = loc.file->ReadAll(*loc.info);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const std::vector<uint8_t>& got = *read;
  EXPECT_TRUE(std::equal(got.begin(), got.end(), expect.begin(), expect.end()));
  std::filesystem::remove_all(dir);
}

// A `tensors` buffer: each listed tensor gets the buffer's dtype and encoding and an equal
// 1-D share of its elements; the checkpoint then passes the bindings check.
TEST(Synthetic, ListedTensorsGetEqualOneDimensionalShares) {
  const auto parsed = verifier::ParseManifest(R"({"schema":1,"name":"m",
    "buffers":{"e":{"kind":"weight","tensors":["m.e.1","m.e.0","m.e.2"],"dtype":"BF16","shape":[3,4,5]},
               "s":{"kind":"weight","tensors":["m.s"],"dtype":"U8","shape":[2,8],"encoding":"e8m0"}}})");
  ASSERT_TRUE(parsed.manifest);
  const auto dir =
      std::filesystem::temp_directory_path() / ("lp_gen_parts_" + std::to_string(::getpid()));
  const base::Result<GenSummary> r = GenerateCheckpoint(*parsed.manifest, {.dir = dir.string()});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensors, 4u);
  EXPECT_EQ(r->bytes, 3u * 4 * 5 * 2 + 16);
  auto c = Checkpoint::Open(dir.string());
  ASSERT_TRUE(c.ok()) << c.status().message();
  for (const char* name : {"m.e.0", "m.e.1", "m.e.2"}) {
    const auto loc = (*c)->Find(name);
    ASSERT_TRUE(loc.info) << name;
    EXPECT_EQ(loc.info->dtype, Dtype::kBF16) << name;
    EXPECT_EQ(loc.info->shape, (std::vector<uint64_t>{20})) << name;
  }
  const auto s = (*c)->Find("m.s");
  ASSERT_TRUE(s.info);
  EXPECT_EQ(s.info->shape, (std::vector<uint64_t>{16}));
  const base::Result<std::vector<uint8_t>> scales = s.file->ReadAll(*s.info);
  ASSERT_TRUE(scales.ok());
  for (uint8_t x : *scales) EXPECT_TRUE(x >= 112 && x <= 142) << int(x);  // e8m0, as the buffer
  EXPECT_TRUE(CheckBindings(test_support::PlanOf(*parsed.manifest), **c).ok());
  std::filesystem::remove_all(dir);
}

TEST(Synthetic, ListedTensorsMustShareTheElementsEvenly) {
  const auto parsed = verifier::ParseManifest(R"({"schema":1,"name":"m",
    "buffers":{"e":{"kind":"weight","tensors":["a","b","c"],"dtype":"U8","shape":[10]}}})");
  ASSERT_TRUE(parsed.manifest);
  const auto dir =
      std::filesystem::temp_directory_path() / ("lp_gen_uneven_" + std::to_string(::getpid()));
  const base::Result<GenSummary> r = GenerateCheckpoint(*parsed.manifest, {.dir = dir.string()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_EQ(r.status().message(),
            "buffer e: its 10 elements do not divide evenly among its 3 listed tensors");
  EXPECT_FALSE(std::filesystem::exists(dir / "model.safetensors.index.json"));
  std::filesystem::remove_all(dir);
}

// gen's layer filter: layer numbers of any length, never std::stoll's out_of_range.
TEST(GenLayers, FiltersByLayerNumber) {
  EXPECT_FALSE(BeyondLayers("model.layers.1.mlp.w", 2));
  EXPECT_TRUE(BeyondLayers("model.layers.2.mlp.w", 2));
  EXPECT_TRUE(BeyondLayers("layers.7.w", 2));
  EXPECT_FALSE(BeyondLayers("model.embed.weight", 0));
  EXPECT_FALSE(BeyondLayers("model.xlayers.9.w", 2));  // not a "layers." component
}

TEST(GenLayers, HugeLayerNumbersAreBeyond) {
  EXPECT_NO_THROW(EXPECT_TRUE(BeyondLayers("model.layers.99999999999999999999.w", 4096)));
  EXPECT_TRUE(BeyondLayers("layers." + std::string(400, '9') + ".w", 1));
}

// GenOptions::layers: the checkpoint holds only the tensors of the layers kept.
TEST(GenLayers, CheckpointKeepsLayersBelowN) {
  const auto parsed =
      verifier::ParseManifest(R"({"schema":1,"name":"m","vars":{},"kernels":{},"programs":{},
    "buffers":{"a":{"kind":"weight","tensor":"model.layers.10.a","dtype":"BF16","shape":[64,3]},
               "b":{"kind":"weight","tensor":"model.layers.2.b","dtype":"U8","shape":[1000]},
               "e":{"kind":"weight","tensor":"model.embed","dtype":"F32","shape":[300]}}})");
  ASSERT_TRUE(parsed.manifest);
  const auto dir =
      std::filesystem::temp_directory_path() / ("lp_gen_layers_" + std::to_string(::getpid()));
  const base::Result<GenSummary> r =
      GenerateCheckpoint(*parsed.manifest, {.dir = dir.string(), .seed = 7, .layers = 3});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensors, 2u);
  EXPECT_EQ(r->bytes, 1000u + 1200);
  auto c = Checkpoint::Open(dir.string());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE((*c)->Find("model.layers.2.b").info);
  EXPECT_TRUE((*c)->Find("model.embed").info);
  EXPECT_FALSE((*c)->Find("model.layers.10.a").info);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace loadplan::backend
