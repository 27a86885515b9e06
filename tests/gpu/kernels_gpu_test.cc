// CUDA derive kernels == CPU references, bit for bit, on random inputs (fixed
// seeds), outputs poisoned with 0xA5 before each run, slack past each extent
// checked untouched; gpt-oss-120b full-layer sizes included. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/launch.h"
#include "kernels/reference.h"
#include "kernels/registry/registry.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using testing::DstBytes;
using testing::GptOss;
using testing::RandomBytes;
using testing::Scalars;
using testing::Square;
using testing::SrcBytes;

constexpr uint64_t kSlack = 64;
constexpr uint8_t kPoison = 0xA5;

// A cudaMalloc'd buffer, move-only.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(uint64_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&ptr_, bytes > 0 ? bytes : 1) != cudaSuccess) ptr_ = nullptr;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  [[nodiscard]] uint8_t* get() const { return static_cast<uint8_t*>(ptr_); }
  [[nodiscard]] bool ok() const { return ptr_ != nullptr; }

 private:
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

std::string NoDeviceReason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("no CUDA device (") + cudaGetErrorName(e) + ")";
  if (n == 0) return "no CUDA device";
  return "";
}

class KernelsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = NoDeviceReason(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Uploads `host` at `offset` into a fresh device buffer (poisoned elsewhere).
DeviceBuffer Upload(const std::vector<uint8_t>& host, uint64_t offset) {
  DeviceBuffer d(offset + host.size());
  EXPECT_TRUE(d.ok());
  if (!d.ok()) return d;
  EXPECT_EQ(cudaMemset(d.get(), kPoison, offset + host.size()), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d.get() + offset, host.data(), host.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  return d;
}

std::vector<uint8_t> Download(const uint8_t* d, uint64_t bytes) {
  std::vector<uint8_t> h(bytes);
  EXPECT_EQ(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// Index of the first differing byte, or -1.
int64_t FirstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

struct Case {
  std::string kernel;
  Scalars scalars;
  uint64_t seed = 1;
  uint64_t src_offset = 0;  // bytes past a cudaMalloc'd (256-aligned) base
  uint64_t dst_offset = 0;
  void* stream = nullptr;
};

// src/dst kernels: the CUDA result (extent + slack) equals the CPU one.
void ExpectGpuEqualsCpu(const Case& c) {
  SCOPED_TRACE(c.kernel + " seed " + std::to_string(c.seed));
  const std::vector<uint8_t> src = RandomBytes(SrcBytes(c.kernel, c.scalars), c.seed);
  const testing::RefResult want = testing::RunRef(c.kernel, c.scalars, src, kSlack);
  ASSERT_TRUE(want.status.ok()) << want.status.message();
  const DeviceBuffer d_src = Upload(src, c.src_offset);
  const DeviceBuffer d_dst = Upload(std::vector<uint8_t>(want.dst.size(), kPoison), c.dst_offset);
  ASSERT_TRUE(d_src.ok() && d_dst.ok());
  const KernelArgs args = testing::MakeArgs(d_src.get() + c.src_offset, src.size(),
                                            d_dst.get() + c.dst_offset, want.dst.size(), c.scalars);
  const Status s = LaunchDerive(c.kernel, args, c.stream);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const std::vector<uint8_t> got = Download(d_dst.get() + c.dst_offset, want.dst.size());
  EXPECT_EQ(FirstDifference(got, want.dst), -1) << "of " << got.size() << " bytes";
  for (uint64_t i = want.dst.size() - kSlack; i < want.dst.size(); ++i)
    ASSERT_EQ(got[i], kPoison) << "slack " << i;
}

const std::vector<std::string> kRowKernels = {"mxfp4_fc1_weight", "mxfp4_fc1_scales",
                                              "mxfp4_fc1_bias",   "mxfp4_fc2_weight",
                                              "mxfp4_fc2_scales", "mxfp4_fc2_bias"};

TEST_F(KernelsGpu, RowKernelsSmallShapes) {
  uint64_t seed = 10;
  for (const std::string& k : kRowKernels) {
    ExpectGpuEqualsCpu({k, Square(k, 3, 96, 128), ++seed});
    ExpectGpuEqualsCpu({k, Square(k, 2, 200, 256), ++seed});
    ExpectGpuEqualsCpu({k, Square(k, 1, 2, 128), ++seed});
    ExpectGpuEqualsCpu({k, Square(k, 2, 0, 128), ++seed});
    ExpectGpuEqualsCpu({k, Square(k, 2, 90, 128), ++seed});  // weights: 45-byte rows (1-byte items)
  }
}

TEST_F(KernelsGpu, RowKernelsUnalignedPointers) {
  uint64_t seed = 100;
  for (const std::string& k : kRowKernels) {
    const bool bias = k.find("bias") != std::string::npos;
    ExpectGpuEqualsCpu({k, GptOss(k, 2), ++seed, bias ? 2u : 1u, bias ? 4u : 3u});  // byte paths
    ExpectGpuEqualsCpu({k, GptOss(k, 2), ++seed, 4, 4});                            // 4-byte items
    ExpectGpuEqualsCpu({k, GptOss(k, 2), ++seed, 16, 32});
  }
}

TEST_F(KernelsGpu, ScalesWithRowsTooLongToStage) {
  // 384-byte scale rows (k_pad 12288) take the one-byte-per-thread fallback.
  ExpectGpuEqualsCpu({"mxfp4_fc1_scales", Square("mxfp4_fc1_scales", 1, 12288, 12288), 200});
  ExpectGpuEqualsCpu({"mxfp4_fc2_scales", Square("mxfp4_fc2_scales", 2, 12288, 12288), 201});
}

TEST_F(KernelsGpu, GptOssFullLayerOnAStream) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  uint64_t seed = 300;
  for (const std::string& k : kRowKernels)
    ExpectGpuEqualsCpu({k, GptOss(k, 128), ++seed, 0, 0, stream});
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(KernelsGpu, CopyAndCast) {
  ExpectGpuEqualsCpu({"copy", {{"n", (10 << 20) + 3}}, 400, 1, 3});
  ExpectGpuEqualsCpu({"cast_bf16_f32", {{"n", (5 << 20) + 3}}, 401});
  ExpectGpuEqualsCpu({"cast_bf16_f32", {{"n", (1 << 20) + 1}}, 402, 2, 4});  // element-aligned only
  ExpectGpuEqualsCpu({"cast_bf16_f32", {{"n", 3}}, 403});
}

// mxfp4_dequant: every element code under every scale code, plus random rows.
void ExpectDequantEqual(int64_t rows, int64_t cols, uint64_t seed, uint64_t offset) {
  SCOPED_TRACE("dequant rows " + std::to_string(rows) + " offset " + std::to_string(offset));
  std::vector<uint8_t> blocks = RandomBytes(rows * cols / 2, seed),
                       scales = RandomBytes(rows * cols / 32, seed + 1);
  for (size_t g = 0; g < scales.size() && g < 256; ++g) {
    scales[g] = static_cast<uint8_t>(g);
    for (int b = 0; b < 16; ++b)
      blocks[16 * g + b] = static_cast<uint8_t>(b * 17);  // codes b and b: all 16 per scale
  }
  std::vector<uint8_t> want(rows * cols * 2 + kSlack, kPoison);
  KernelArgs h;
  h.buffers = {{"blocks", {blocks.data(), blocks.size()}},
               {"scales", {scales.data(), scales.size()}},
               {"dst", {want.data(), want.size()}}};
  h.scalars = {{"rows", rows}, {"cols", cols}};
  ASSERT_TRUE(RunReference("mxfp4_dequant", h).ok());
  const DeviceBuffer d_b = Upload(blocks, offset), d_s = Upload(scales, offset);
  const DeviceBuffer d_dst = Upload(std::vector<uint8_t>(want.size(), kPoison), 2 * offset);
  KernelArgs d = h;
  d.buffers = {{"blocks", {d_b.get() + offset, blocks.size()}},
               {"scales", {d_s.get() + offset, scales.size()}},
               {"dst", {d_dst.get() + 2 * offset, want.size()}}};
  const Status s = LaunchDerive("mxfp4_dequant", d, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(FirstDifference(Download(d_dst.get() + 2 * offset, want.size()), want), -1);
}

TEST_F(KernelsGpu, Dequant) {
  ExpectDequantEqual(300, 2880, 500, 0);
  ExpectDequantEqual(300, 2880, 502, 1);
  ExpectDequantEqual(1, 32, 504, 0);
}

// Kernels with several read buffers: each read parameter gets random bytes over its registry
// extent (then `prepare` may edit them), uploaded at its offset; dst (with slack) at
// dst_offset. CUDA == CPU over the extent, the slack untouched.
using HostBuffers = std::map<std::string, std::vector<uint8_t>>;
struct MultiCase {
  std::string kernel;
  Scalars scalars;
  uint64_t seed = 1;
  std::map<std::string, uint64_t> offsets;  // bytes past the allocation (default 0)
  std::function<void(HostBuffers&)> prepare;
};

void ExpectMultiEqual(const MultiCase& c) {
  SCOPED_TRACE(c.kernel + " seed " + std::to_string(c.seed));
  const KernelSpec* k = FindKernel(c.kernel);
  ASSERT_NE(k, nullptr);
  const expr::Assignment at(c.scalars.begin(), c.scalars.end());
  HostBuffers host;
  uint64_t dst_bytes = 0, seed = c.seed;
  for (const ParamSpec& p : k->params) {
    if (p.access == base::Access::kScalar) continue;
    const auto bytes =
        static_cast<uint64_t>(*expr::ValueAt(*p.extent, at)) * base::DtypeBits(*p.dtype) / 8;
    if (p.access == base::Access::kWrite) {
      dst_bytes = bytes;
    } else {
      host[p.name] = RandomBytes(bytes, ++seed);
    }
  }
  if (c.prepare) c.prepare(host);
  const auto offset = [&](const std::string& n) {
    const auto it = c.offsets.find(n);
    return it == c.offsets.end() ? uint64_t{0} : it->second;
  };
  std::vector<uint8_t> want(dst_bytes + kSlack, kPoison);
  KernelArgs h, d;
  std::vector<DeviceBuffer> device;
  for (auto& [n, v] : host) {
    h.buffers[n] = {v.data(), v.size()};
    device.push_back(Upload(v, offset(n)));
    d.buffers[n] = {device.back().get() + offset(n), v.size()};
  }
  h.buffers["dst"] = {want.data(), want.size()};
  for (const auto& [n, v] : c.scalars) h.scalars[n] = d.scalars[n] = v;
  ASSERT_TRUE(RunReference(c.kernel, h).ok());
  const DeviceBuffer d_dst = Upload(std::vector<uint8_t>(want.size(), kPoison), offset("dst"));
  d.buffers["dst"] = {d_dst.get() + offset("dst"), want.size()};
  const Status s = LaunchDerive(c.kernel, d, nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint8_t> got = Download(d_dst.get() + offset("dst"), want.size());
  EXPECT_EQ(FirstDifference(got, want), -1) << "of " << got.size() << " bytes";
}

Scalars Experts(int64_t experts, int64_t rows, int64_t cols) {
  return {{"experts", experts}, {"rows", rows}, {"cols", cols}};
}

// The first 256 scale groups take every E8M0 code (0xFF included), each with all 16 codes.
void EveryScaleCode(HostBuffers& h) {
  std::vector<uint8_t>&blocks = h["blocks"], &scales = h["scales"];
  for (size_t g = 0; g < scales.size() && g < 256; ++g) {
    scales[g] = static_cast<uint8_t>(g);
    for (int b = 0; b < 16; ++b) blocks[16 * g + b] = static_cast<uint8_t>(b * 17);
  }
}

TEST_F(KernelsGpu, Mxfp4ExpertsBf16) {
  const std::string k = "mxfp4_experts_bf16";
  ExpectMultiEqual({k, Experts(3, 300, 2880), 600, {}, EveryScaleCode});  // 4-byte stores
  ExpectMultiEqual({k, Experts(2, 301, 2880), 602});  // odd rows: 2-byte stores, last row alone
  ExpectMultiEqual({k, Experts(2, 130, 96), 604});    // partial row and column tiles
  ExpectMultiEqual({k, Experts(1, 1, 32), 606, {}, EveryScaleCode});
  ExpectMultiEqual({k, Experts(2, 64, 128), 608});  // whole tiles only
  ExpectMultiEqual({k, Experts(0, 64, 128), 610});  // nothing to do
  // Unaligned: blocks byte loads; dst not 4-byte aligned (2-byte stores); both.
  ExpectMultiEqual({k, Experts(2, 200, 320), 612, {{"blocks", 1}, {"scales", 3}}});
  ExpectMultiEqual({k, Experts(2, 200, 320), 614, {{"dst", 2}}});
  ExpectMultiEqual({k, Experts(2, 200, 320), 616, {{"blocks", 4}, {"dst", 6}}});
  // gpt-oss-120b gate_up [E, 5760, 90, 16] and down [E, 2880, 90, 16], 4 experts.
  ExpectMultiEqual({k, Experts(4, 5760, 2880), 618});
  ExpectMultiEqual({k, Experts(4, 2880, 2880), 620});
}

Scalars Fp8(int64_t rows, int64_t cols, int64_t block_rows, int64_t block_cols) {
  return {{"rows", rows}, {"cols", cols}, {"block_rows", block_rows}, {"block_cols", block_cols}};
}

// Scales as checkpoints have them (about 2^-10, random mantissas) instead of random bits.
void RealisticScales(HostBuffers& h) {
  std::vector<uint8_t>& s = h["scales"];
  for (size_t i = 0; i + 4 <= s.size(); i += 4) {
    uint32_t b = 0;
    std::memcpy(&b, &s[i], 4);
    b = 0x3A000000u | (b & 0x00FFFFFFu);
    std::memcpy(&s[i], &b, 4);
  }
}

TEST_F(KernelsGpu, Fp8BlockBf16) {
  const std::string k = "fp8_block_bf16";
  ExpectMultiEqual({k, Fp8(300, 200, 128, 128), 700});  // random scale bits: inf, NaN, subnormal
  ExpectMultiEqual({k, Fp8(300, 200, 128, 128), 702, {}, RealisticScales});
  ExpectMultiEqual({k, Fp8(300, 200, 128, 100), 704, {}, RealisticScales});  // per-element path
  ExpectMultiEqual({k, Fp8(5, 7, 2, 3), 706});
  ExpectMultiEqual({k, Fp8(1, 1, 128, 128), 708});
  ExpectMultiEqual({k, Fp8(0, 7, 2, 3), 710});
  ExpectMultiEqual({k, Fp8(64, 64, int64_t{1} << 40, 16), 712});  // one block row (clamped)
  ExpectMultiEqual({k, Fp8(300, 200, 128, 128), 714, {{"src", 1}}, RealisticScales});
  ExpectMultiEqual({k, Fp8(300, 200, 128, 128), 716, {{"dst", 2}, {"scales", 4}}});
  // DeepSeek-V3 shapes: an expert's gate_proj [2048, 7168] and q_b_proj [24576, 1536].
  ExpectMultiEqual({k, Fp8(2048, 7168, 128, 128), 718, {}, RealisticScales});
  ExpectMultiEqual({k, Fp8(24576, 1536, 128, 128), 720, {}, RealisticScales});
}

TEST_F(KernelsGpu, RefusedCallTouchesNothing) {
  const Scalars bad = {{"experts", 1}, {"rows", 192}, {"cols", 48}, {"i_pad", 100}, {"k_pad", 128}};
  const DeviceBuffer src = Upload(RandomBytes(192 * 48, 1), 0);
  const DeviceBuffer dst = Upload(std::vector<uint8_t>(1 << 16, kPoison), 0);
  const Status s = LaunchDerive(
      "mxfp4_fc1_weight", testing::MakeArgs(src.get(), 192 * 48, dst.get(), 1 << 16, bad), nullptr);
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint8_t> after = Download(dst.get(), 1 << 16);
  EXPECT_EQ(FirstDifference(after, std::vector<uint8_t>(1 << 16, kPoison)), -1);
}

}  // namespace
}  // namespace loadplan::kernels
