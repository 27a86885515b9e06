// Bandwidth of the CUDA derive kernels on gpt-oss-120b full-layer sizes (and
// larger synthetic ones), each beside a cudaMemcpyDeviceToDevice of its output
// size in the same run. Prints a markdown table: GB/s counts bytes read plus
// bytes written (10^9 B/s); ratio = kernel GB/s / memcpy GB/s. No assertions.
//
// Link: loadplan_kernels and CUDA::cudart_static.
// Usage: bench_kernels_gpu [repetitions=20]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kernels/launch.h"

namespace {

using loadplan::kernels::KernelArgs;
using Scalars = std::map<std::string, int64_t>;

#define BENCH_CUDA(call)                                                                        \
  do {                                                                                          \
    const cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

struct Case {
  std::string label;
  std::string kernel;
  Scalars scalars;
  std::map<std::string, uint64_t> reads;  // buffer parameter -> bytes
  uint64_t dst_bytes = 0;
};

Scalars Fc(bool fc1, bool bias, bool weight, int64_t experts) {
  Scalars s = {{"experts", experts}, {"rows", fc1 ? 5760 : 2880}};
  if (fc1 || !bias) s["i_pad"] = 2944;
  if (!bias) s["cols"] = weight ? 1440 : 90;
  if (fc1 && !bias) s["k_pad"] = 2944;
  if (!fc1) s["h_pad"] = 2944;
  return s;
}

std::vector<Case> Cases() {
  std::vector<Case> v;
  for (const int64_t experts : {128, 512}) {
    const std::string tag = experts == 128 ? " (1 layer)" : " (x4 experts)";
    const uint64_t e = experts;
    v.push_back({"fc1 weight" + tag,
                 "mxfp4_fc1_weight",
                 Fc(true, false, true, experts),
                 {{"src", e * 5760 * 1440}},
                 e * 5888 * 1472});
    v.push_back({"fc1 scales" + tag,
                 "mxfp4_fc1_scales",
                 Fc(true, false, false, experts),
                 {{"src", e * 5760 * 90}},
                 e * 5888 * 92});
    v.push_back({"fc1 bias" + tag,
                 "mxfp4_fc1_bias",
                 Fc(true, true, false, experts),
                 {{"src", e * 5760 * 2}},
                 e * 5888 * 4});
    v.push_back({"fc2 weight" + tag,
                 "mxfp4_fc2_weight",
                 Fc(false, false, true, experts),
                 {{"src", e * 2880 * 1440}},
                 e * 2944 * 1472});
    v.push_back({"fc2 scales" + tag,
                 "mxfp4_fc2_scales",
                 Fc(false, false, false, experts),
                 {{"src", e * 2880 * 90}},
                 e * 2944 * 92});
    v.push_back({"fc2 bias" + tag,
                 "mxfp4_fc2_bias",
                 Fc(false, true, false, experts),
                 {{"src", e * 2880 * 2}},
                 e * 2944 * 4});
  }
  const int64_t n = int64_t{1} << 28;
  v.push_back({"copy 1 GiB", "copy", {{"n", n * 4}}, {{"src", uint64_t(n) * 4}}, uint64_t(n) * 4});
  v.push_back({"cast 256 Mi elements",
               "cast_bf16_f32",
               {{"n", n}},
               {{"src", uint64_t(n) * 2}},
               uint64_t(n) * 4});
  const int64_t rows = 201088, cols = 2880;  // gpt-oss vocabulary x hidden
  v.push_back({"dequant 201088 x 2880",
               "mxfp4_dequant",
               {{"rows", rows}, {"cols", cols}},
               {{"blocks", uint64_t(rows * cols / 2)}, {"scales", uint64_t(rows * cols / 32)}},
               uint64_t(rows * cols * 2)});
  // gpt-oss-120b experts in transformers' layout: gate_up [128, 5760, 90, 16] -> [128, 2880,
  // 5760], down [128, 2880, 90, 16] -> [128, 2880, 2880].
  for (const int64_t r : {5760, 2880}) {
    const uint64_t elems = uint64_t{128} * r * 2880;
    v.push_back({r == 5760 ? "experts bf16 gate_up (1 layer)" : "experts bf16 down (1 layer)",
                 "mxfp4_experts_bf16",
                 {{"experts", 128}, {"rows", r}, {"cols", 2880}},
                 {{"blocks", elems / 2}, {"scales", elems / 32}},
                 elems * 2});
  }
  // DeepSeek-V3 FP8 with 128 x 128 block scales: a dense MLP's gate [18432, 7168] and the
  // embedding-sized [129280, 7168].
  for (const int64_t r : {18432, 129280}) {
    const int64_t c = 7168, scales = (r + 127) / 128 * (c / 128);
    v.push_back({"fp8 block " + std::to_string(r) + " x 7168",
                 "fp8_block_bf16",
                 {{"rows", r}, {"cols", c}, {"block_rows", 128}, {"block_cols", 128}},
                 {{"src", uint64_t(r * c)}, {"scales", uint64_t(scales * 4)}},
                 uint64_t(r * c * 2)});
  }
  return v;
}

// Device buffers of one input/output set, filled with non-zero random-ish bytes.
struct Set {
  std::map<std::string, void*> bufs;
  KernelArgs args;
};

Set MakeSet(const Case& c, unsigned seed) {
  Set s;
  auto alloc = [&](const std::string& name, uint64_t bytes) {
    void* p = nullptr;
    BENCH_CUDA(cudaMalloc(&p, bytes));
    BENCH_CUDA(
        cudaMemset(p, 0x3B + seed, bytes));  // not zeros: zeros can run faster than real data
    s.bufs[name] = p;
    s.args.buffers[name] = {p, bytes};
  };
  for (const auto& [name, bytes] : c.reads) alloc(name, bytes);
  alloc("dst", c.dst_bytes);
  for (const auto& [k, v] : c.scalars) s.args.scalars[k] = v;
  return s;
}

void FreeSet(Set& s) {
  for (auto& [n, p] : s.bufs) BENCH_CUDA(cudaFree(p));
}

// Median milliseconds of `reps` timed runs of `fn` (after 3 warm-ups), alternating sets.
template <typename Fn>
float MedianMs(int reps, Fn fn) {
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) fn(i);
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    BENCH_CUDA(cudaEventRecord(a));
    fn(i);
    BENCH_CUDA(cudaEventRecord(b));
    BENCH_CUDA(cudaEventSynchronize(b));
    float t = 0;
    BENCH_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void RunCase(const Case& c, int reps) {
  Set sets[2] = {MakeSet(c, 0), MakeSet(c, 1)};  // two sets: repeated runs do not just hit L2
  uint64_t read = 0;
  for (const auto& [n, b] : c.reads) read += b;
  const float k_ms = MedianMs(reps, [&](int i) {
    const loadplan::kernels::Status s =
        loadplan::kernels::LaunchDerive(c.kernel, sets[i % 2].args, nullptr);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      std::exit(1);
    }
  });
  BENCH_CUDA(cudaGetLastError());
  const float m_ms = MedianMs(reps, [&](int i) {
    BENCH_CUDA(cudaMemcpyAsync(sets[i % 2].bufs["dst"], sets[(i + 1) % 2].bufs["dst"], c.dst_bytes,
                               cudaMemcpyDeviceToDevice));
  });
  const double k_gbs = double(read + c.dst_bytes) / (k_ms * 1e6),
               m_gbs = 2.0 * c.dst_bytes / (m_ms * 1e6);
  std::printf("| %s | `%s` | %.1f | %.1f | %.3f | %.0f | %.0f | %.2f |\n", c.label.c_str(),
              c.kernel.c_str(), read / 1048576.0, c.dst_bytes / 1048576.0, k_ms, k_gbs, m_gbs,
              k_gbs / m_gbs);
  std::fflush(stdout);
  FreeSet(sets[0]);
  FreeSet(sets[1]);
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  cudaDeviceProp p{};
  BENCH_CUDA(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB; median of %d runs, events\n\n", p.name,
              p.multiProcessorCount, p.l2CacheSize >> 20, reps);
  std::printf(
      "| case | kernel | read MiB | written MiB | ms | GB/s (r+w) | memcpy GB/s | ratio |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Case& c : Cases()) RunCase(c, reps);
  return 0;
}
