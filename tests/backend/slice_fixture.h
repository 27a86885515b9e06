// Checkpoint tensors of every dtype the tensor-parallel split meets (BF16, F8_E4M3, I8, MXFP4
// blocks and their E8M0 scales as U8, F4), their slices along every dimension, a manifest
// binding them, and an element-wise reference slicing (no run arithmetic): shared by the host
// backend's slice tests and the CUDA backend's (tests/gpu/cuda_slices_test.cc).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/safetensors_write.h"
#include "base/dtype.h"
#include "simulator/plan.h"
#include "verifier/builder.h"

namespace loadplan::test_support {

namespace fs = std::filesystem;

// The costs the slice tests weigh a slice's read by (with 3 threads and the default per-run
// and per-mapped-run costs): auto then takes runs (1 slice), span (10) and
// map (1) on the fixture's dims 1 and 2 (SliceChoice.TheGpuTestsFixtureIsReadEveryWay).
inline constexpr double kFixtureReadRate = 3e9;  // bytes/s
inline constexpr double kFixturePerPageSeconds = 2e-6;
using base::Dtype;
using verifier::TensorSlice;

struct Tensor {
  std::string name;
  Dtype dtype;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};

inline std::vector<uint8_t> Pattern(uint64_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 2654435761u + seed) >> 7);
  return v;
}

// Element-wise: every element of the slice's shape, its multi-index mapped to the tensor's
// (the slice's dimension shifted by start), its bytes copied. For a sub-byte dtype the last
// dimension counts bytes (the slice is on whole bytes, K14).
inline std::vector<uint8_t> Reference(const Tensor& t, const TensorSlice& s) {
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

// Every dtype at [rows, cols, last] (the last dimension fixed per dtype): [4, 6, ...] by default.
inline std::vector<Tensor> Tensors(uint64_t rows = 4, uint64_t cols = 6) {
  std::vector<Tensor> out;
  const auto add = [&](std::string name, Dtype dtype, std::vector<uint64_t> shape) {
    uint64_t bits = base::DtypeBits(dtype);
    for (uint64_t d : shape) bits *= d;
    out.push_back({name, dtype, shape, Pattern(bits / 8, static_cast<uint32_t>(out.size()))});
  };
  add("bf16", Dtype::kBF16, {rows, cols, 8});
  add("fp8", Dtype::kF8E4M3, {rows, cols, 8});
  add("i8", Dtype::kI8, {rows, cols, 8});
  add("blocks", Dtype::kU8, {rows, cols, 64});  // MXFP4: 4 groups of 16 bytes per row
  add("scales", Dtype::kU8, {rows, cols, 4});   // E8M0, one per block
  add("f4", Dtype::kF4, {rows, cols, 8});       // 4 bytes a row
  return out;
}

// One slice per dimension of each tensor: a middle range (blocks: whole 16-byte blocks), with
// its tensor's extent.
inline std::vector<std::pair<std::string, TensorSlice>> Slices(const Tensor& t) {
  std::vector<std::pair<std::string, TensorSlice>> out;
  for (uint64_t d = 0; d < t.shape.size(); ++d) {
    TensorSlice s{.dim = d, .start = 1, .length = t.shape[d] / 2, .extent = t.shape[d]};
    if (t.name == "blocks" && d == 2) s = {.dim = 2, .start = 16, .length = 32, .extent = 64};
    if (t.name == "f4" && d == 2) s = {.dim = 2, .start = 2, .length = 4, .extent = 8};
    out.emplace_back(fmt::format("{}.d{}", t.name, d), s);
  }
  return out;
}

struct TempCheckpoint {
  fs::path dir;
  explicit TempCheckpoint(const std::vector<Tensor>& tensors) {
    dir = fs::temp_directory_path() /
          fmt::format("lp_slices_{}_{}", ::getpid(), tensors.size() ? tensors[0].shape[0] : 0);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::vector<backend::TensorSpec> specs;
    for (const Tensor& t : tensors)
      specs.push_back(backend::TensorSpec{.name = t.name, .dtype = t.dtype, .shape = t.shape});
    const auto fill = [&](size_t i, uint64_t off, std::span<uint8_t> out) {
      std::copy_n(tensors[i].bytes.begin() + static_cast<std::ptrdiff_t>(off), out.size(),
                  out.begin());
    };
    EXPECT_TRUE(
        backend::WriteSafetensors((dir / "model.safetensors").string(), specs, {}, fill).ok());
  }
  ~TempCheckpoint() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// The slices along dimension `dim` of every tensor (slices of one tensor along two dimensions
// overlap: K6).
inline verifier::Manifest SliceManifest(const std::vector<Tensor>& tensors, uint64_t dim) {
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

inline const simulator::PlannedBuffer& Buffer(const simulator::LoadPlan& p, std::string_view name) {
  for (const simulator::PlannedBuffer& b : p.buffers) {
    if (b.name == name) return b;
  }
  ADD_FAILURE() << name;
  return p.buffers.front();
}

}  // namespace loadplan::test_support
