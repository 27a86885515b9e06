// Buffers bound by a `slice` of a checkpoint tensor through the host backend (docs/manifest.md,
// "Slices"): every dtype the tensor-parallel split meets (BF16, F8_E4M3, I8, MXFP4 blocks and
// their E8M0 scales as U8, F4) sliced along every dimension of a 3-D tensor, each buffer equal
// to an element-wise slicing of the whole tensor written here (no run arithmetic in the
// reference); the runs are those base::RunsOfSlice says; a slice outside its tensor, a shape
// that does not match, refused by the preflight naming buffer, tensor and shapes; a read fault
// at every run of a strided slice stops the load and names the tensor and the run's offset.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors_write.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "base/slice_runs.h"
#include "tests/verified_plan.h"
#include "verifier/builder.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using base::Dtype;
using simulator::LoadPlan;
using verifier::TensorSlice;

struct Tensor {
  std::string name;
  Dtype dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> Pattern(uint64_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 7);
  return v;
}

// Element-wise: every element of the slice's shape, its multi-index mapped to the tensor's
// (the slice's dimension shifted by start), its bytes copied. For a sub-byte dtype the last
// dimension counts bytes (the slice is on whole bytes, K14).
std::vector<uint8_t> Reference(const Tensor& t, const TensorSlice& s) {
  const uint32_t bits = base::DtypeBits(t.dtype);
  std::vector<uint64_t> shape = t.shape;
  uint64_t elem = bits / 8;
  if (bits < 8) {  // view the last dimension as bytes
    shape.back() = shape.back() * bits / 8;
    elem = 1;
  }
  std::vector<uint64_t> out_shape = shape;
  TensorSlice sb = s;
  if (bits < 8 && s.dim + 1 == shape.size()) sb = {s.dim, s.start * bits / 8, s.length * bits / 8};
  out_shape[sb.dim] = sb.length;
  uint64_t n = 1;
  for (uint64_t d : out_shape) n *= d;
  std::vector<uint8_t> out;
  std::vector<uint64_t> idx(shape.size(), 0);
  for (uint64_t k = 0; k < n; ++k) {
    uint64_t rem = k, src = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    for (size_t d = 0; d < shape.size(); ++d)
      src = src * shape[d] + idx[d] + (d == sb.dim ? sb.start : 0);
    out.insert(out.end(), t.bytes.begin() + static_cast<std::ptrdiff_t>(src * elem),
               t.bytes.begin() + static_cast<std::ptrdiff_t>((src + 1) * elem));
  }
  return out;
}

std::vector<Tensor> Tensors() {
  std::vector<Tensor> out;
  const auto add = [&](std::string name, Dtype dtype, std::vector<uint64_t> shape) {
    uint64_t bits = base::DtypeBits(dtype);
    for (uint64_t d : shape) bits *= d;
    out.push_back({name, dtype, shape, Pattern(bits / 8, static_cast<uint32_t>(out.size()))});
  };
  add("bf16", Dtype::kBF16, {4, 6, 8});
  add("fp8", Dtype::kF8E4M3, {4, 6, 8});
  add("i8", Dtype::kI8, {4, 6, 8});
  add("blocks", Dtype::kU8, {4, 6, 64});  // MXFP4: 4 groups of 16 bytes per row
  add("scales", Dtype::kU8, {4, 6, 4});   // E8M0, one per block
  add("f4", Dtype::kF4, {4, 6, 8});       // 4 bytes a row
  return out;
}

// One slice per dimension of each tensor: a middle range (blocks: whole 16-byte blocks).
std::vector<std::pair<std::string, TensorSlice>> Slices(const Tensor& t) {
  std::vector<std::pair<std::string, TensorSlice>> out;
  for (uint64_t d = 0; d < t.shape.size(); ++d) {
    TensorSlice s{.dim = d, .start = 1, .length = t.shape[d] / 2};
    if (t.name == "blocks" && d == 2) s = {.dim = 2, .start = 16, .length = 32};
    if (t.name == "f4" && d == 2) s = {.dim = 2, .start = 2, .length = 4};
    out.emplace_back(fmt::format("{}.d{}", t.name, d), s);
  }
  return out;
}

struct TempCheckpoint {
  fs::path dir;
  explicit TempCheckpoint(const std::vector<Tensor>& tensors) {
    dir = fs::temp_directory_path() / fmt::format("lp_slices_{}", ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::vector<TensorSpec> specs;
    for (const Tensor& t : tensors)
      specs.push_back({.name = t.name, .dtype = t.dtype, .shape = t.shape});
    const auto fill = [&](size_t i, uint64_t off, std::span<uint8_t> out) {
      std::copy_n(tensors[i].bytes.begin() + static_cast<std::ptrdiff_t>(off), out.size(),
                  out.begin());
    };
    EXPECT_TRUE(WriteSafetensors((dir / "model.safetensors").string(), specs, {}, fill).ok());
  }
  ~TempCheckpoint() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The slices along dimension `dim` of every tensor (slices of one tensor along two dimensions
// overlap: K6).
verifier::Manifest SliceManifest(const std::vector<Tensor>& tensors, uint64_t dim) {
  verifier::ManifestBuilder b("slices");
  for (const Tensor& t : tensors) {
    for (const auto& [name, s] : Slices(t)) {
      if (s.dim != dim) continue;
      std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
      shape[s.dim] = static_cast<int64_t>(s.length);
      verifier::Dims dims(shape.begin(), shape.end());
      b.Checkpoint(
          name, t.name, t.dtype, dims,
          {.encoding = t.name == "blocks" ? std::optional<std::string>("fp4_e2m1x2") : std::nullopt,
           .slice = s});
    }
  }
  const verifier::BuildResult built = b.Build();
  EXPECT_TRUE(built.ok()) << (built.errors.empty() ? "" : built.errors[0]);
  return built.manifest;
}

const simulator::PlannedBuffer& Buffer(const LoadPlan& p, std::string_view name) {
  for (const simulator::PlannedBuffer& b : p.buffers) {
    if (b.name == name) return b;
  }
  ADD_FAILURE() << name;
  return p.buffers.front();
}

// The tensors written into one checkpoint, opened, for every test.
class HostSlices : public ::testing::Test {
 protected:
  void SetUp() override {
    base::Result<std::unique_ptr<Checkpoint>> c = Checkpoint::Open(dir_.dir.string());
    ASSERT_TRUE(c.ok()) << c.status().message();
    ckpt_ = std::move(*c);
  }
  const std::vector<Tensor> tensors = Tensors();
  const TempCheckpoint dir_{tensors};
  std::unique_ptr<Checkpoint> ckpt_;
};

TEST_F(HostSlices, EveryDtypeAlongEveryDimEqualsElementWiseSlicing) {
  size_t compared = 0;
  for (uint64_t dim = 0; dim < 3; ++dim) {
    const verifier::Manifest m = SliceManifest(tensors, dim);
    EXPECT_EQ(m.schema, 2);
    const LoadPlan plan = test_support::PlanOf(m);
    ASSERT_TRUE(CheckBindings(plan, *ckpt_).ok()) << CheckBindings(plan, *ckpt_).message();
    for (const uint64_t chunk : {uint64_t{3}, uint64_t{1} << 20}) {  // runs in pieces, whole
      HostBackend host(plan, *ckpt_, {.read_chunk_bytes = chunk});
      const ExecuteResult r = Execute(plan, host);
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      for (const Tensor& t : tensors) {
        for (const auto& [name, s] : Slices(t)) {
          if (s.dim != dim) continue;
          const auto got = host.Bytes(Buffer(plan, name).id);
          const std::vector<uint8_t> want = Reference(t, s);
          ASSERT_EQ(got.size(), want.size()) << name;
          EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << name;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 36u);  // 6 tensors x 3 dims x 2 chunk sizes
}

TEST_F(HostSlices, RunsAreOnePerOuterIndexARowApart) {
  const LoadPlan plans[] = {test_support::PlanOf(SliceManifest(tensors, 0)),
                            test_support::PlanOf(SliceManifest(tensors, 1)),
                            test_support::PlanOf(SliceManifest(tensors, 2))};
  const auto runs = [&](const std::string& name) {
    const LoadPlan& plan = plans[name.back() - '0'];
    const base::Result<std::vector<FillPart>> parts = LocateFill(Buffer(plan, name), *ckpt_);
    EXPECT_TRUE(parts.ok()) << parts.status().message();
    return parts.ok() && parts->size() == 1 ? (*parts)[0].runs : base::SliceRuns{};
  };
  // bf16 [4, 6, 8]: rows of 16 bytes; dim 0 [1, 3): one run of 2 x 96 bytes at 96
  EXPECT_EQ(runs("bf16.d0"), (base::SliceRuns{.first = 96, .run_bytes = 192, .count = 1}));
  // dim 1 [1, 4): 4 runs of 3 rows (48 bytes), 96 bytes apart, from 16
  EXPECT_EQ(runs("bf16.d1"),
            (base::SliceRuns{.first = 16, .run_bytes = 48, .count = 4, .stride = 96}));
  // dim 2 [1, 5): 24 runs of 8 bytes, 16 apart, from 2
  EXPECT_EQ(runs("bf16.d2"),
            (base::SliceRuns{.first = 2, .run_bytes = 8, .count = 24, .stride = 16}));
  // MXFP4 blocks [16, 48) of 64 bytes a row: 24 runs of 32 bytes
  EXPECT_EQ(runs("blocks.d2"),
            (base::SliceRuns{.first = 16, .run_bytes = 32, .count = 24, .stride = 64}));
  // F4 elements [2, 6) of 8 (4 bytes a row): 24 runs of 2 bytes from byte 1
  EXPECT_EQ(runs("f4.d2"), (base::SliceRuns{.first = 1, .run_bytes = 2, .count = 24, .stride = 4}));
}

TEST_F(HostSlices, ASliceThatDoesNotFitItsTensorIsRefusedNamingBoth) {
  verifier::ManifestBuilder b("bad");
  b.Checkpoint("past", "bf16", Dtype::kBF16, {4, 6, 4}, {.slice = TensorSlice{2, 6, 4}});
  b.Checkpoint("wrong", "i8", Dtype::kI8, {2, 5, 8}, {.slice = TensorSlice{0, 0, 2}});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok());
  const LoadPlan plan = test_support::PlanOf(built.manifest);
  const std::string msg = CheckBindings(plan, *ckpt_).message();
  EXPECT_NE(msg.find("buffer past (/buffers/past): tensor bf16 of shape [4, 6, 8] in "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("slice [6, 10) of dimension 2 is not inside its extent 8"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("buffer wrong (/buffers/wrong): tensor i8 has shape [4, 6, 8] in "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("has shape [2, 6, 8], the manifest says [2, 5, 8]"), std::string::npos) << msg;
  EXPECT_FALSE(LocateFill(Buffer(plan, "past"), *ckpt_).ok());
  EXPECT_FALSE(LocateFill(Buffer(plan, "wrong"), *ckpt_).ok());
}

// EIO at each run of a strided slice (24 runs of 8 bytes, read one run per read): the load
// stops with kIo naming the file, the tensor and the run's byte offset in it.
TEST_F(HostSlices, AReadFaultAtEveryRunNamesTheTensorAndTheRunsOffset) {
  verifier::ManifestBuilder b("one");
  b.Checkpoint("cols", "bf16", Dtype::kBF16, {4, 6, 4}, {.slice = TensorSlice{2, 1, 4}});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok());
  const LoadPlan plan = test_support::PlanOf(built.manifest);
  for (uint64_t k = 0; k < 24; ++k) {
    HostBackend host(plan, *ckpt_, {.io_faults = {.eio_at_read = k}});
    const ExecuteResult r = Execute(plan, host);
    ASSERT_FALSE(r.status.ok()) << k;
    EXPECT_EQ(r.status.kind(), base::ErrorKind::kIo) << r.status.message();
    EXPECT_NE(r.status.message().find("tensor bf16"), std::string::npos) << r.status.message();
    EXPECT_NE(r.status.message().find(fmt::format("byte offset {} ", 2 + 16 * k)),
              std::string::npos)
        << r.status.message();
    EXPECT_TRUE(r.cleanup.ok());
  }
}

}  // namespace
}  // namespace loadplan::backend
