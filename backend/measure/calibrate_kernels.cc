// Calibrate's kernel rates: one case per registry kernel (the sizes of bench/kernels_gpu.cc's
// one-layer rows), timed with events on a stream; and the launch overhead.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/measure/calibrate_internal.h"
#include "backend/cuda/cuda_check.h"
#include "base/seconds.h"
#include "kernels/launch.h"
#include "kernels/registry/registry.h"

namespace loadplan::backend {
namespace {

struct Case {
  std::string kernel;
  std::map<std::string, int64_t> scalars;
  std::map<std::string, uint64_t> reads;  // buffer parameter -> bytes
  uint64_t dst_bytes = 0;
};

std::map<std::string, int64_t> Fc(bool fc1, bool bias, bool weight) {
  std::map<std::string, int64_t> s = {{"experts", 128}, {"rows", fc1 ? 5760 : 2880}};
  if (fc1 || !bias) s["i_pad"] = 2944;
  if (!bias) s["cols"] = weight ? 1440 : 90;
  if (fc1 && !bias) s["k_pad"] = 2944;
  if (!fc1) s["h_pad"] = 2944;
  return s;
}

std::vector<Case> Cases() {
  const uint64_t e = 128;
  const int64_t n = int64_t{1} << 26;
  const int64_t rows = 201088, cols = 2880;
  const uint64_t experts = uint64_t{128} * 5760 * 2880;
  const int64_t fr = 18432, fc = 7168, fscales = (fr + 127) / 128 * (fc / 128);
  return {
      {"cast_bf16_f32", {{"n", n}}, {{"src", uint64_t(n) * 2}}, uint64_t(n) * 4},
      {"copy", {{"n", n * 4}}, {{"src", uint64_t(n) * 4}}, uint64_t(n) * 4},
      {"fp8_block_bf16",
       {{"rows", fr}, {"cols", fc}, {"block_rows", 128}, {"block_cols", 128}},
       {{"src", uint64_t(fr * fc)}, {"scales", uint64_t(fscales * 4)}},
       uint64_t(fr * fc * 2)},
      {"mxfp4_dequant",
       {{"rows", rows}, {"cols", cols}},
       {{"blocks", uint64_t(rows * cols / 2)}, {"scales", uint64_t(rows * cols / 32)}},
       uint64_t(rows * cols * 2)},
      {"mxfp4_experts_bf16",
       {{"experts", 128}, {"rows", 5760}, {"cols", 2880}},
       {{"blocks", experts / 2}, {"scales", experts / 32}},
       experts * 2},
      {"mxfp4_fc1_bias", Fc(true, true, false), {{"src", e * 5760 * 2}}, e * 5888 * 4},
      {"mxfp4_fc1_scales", Fc(true, false, false), {{"src", e * 5760 * 90}}, e * 5888 * 92},
      {"mxfp4_fc1_weight", Fc(true, false, true), {{"src", e * 5760 * 1440}}, e * 5888 * 1472},
      {"mxfp4_fc2_bias", Fc(false, true, false), {{"src", e * 2880 * 2}}, e * 2944 * 4},
      {"mxfp4_fc2_scales", Fc(false, false, false), {{"src", e * 2880 * 90}}, e * 2944 * 92},
      {"mxfp4_fc2_weight", Fc(false, false, true), {{"src", e * 2880 * 1440}}, e * 2944 * 1472},
  };
}

// Median seconds of 5 event-timed launches after 2 warm-ups.
Status TimeCase(const Case& c, cudaStream_t stream, double& seconds) {
  std::vector<cuda::DeviceMemory> held;
  kernels::KernelArgs args;
  auto alloc = [&](const std::string& name, uint64_t bytes) -> Status {
    held.emplace_back();
    if (Status st = cuda::AllocateDevice(bytes, held.back()); !st.ok()) return st;
    LOADPLAN_CUDA_TRY(cudaMemset(held.back().get(), 0x3B, bytes));  // not zeros
    args.buffers[name] = {held.back().get(), bytes};
    return Status::Ok();
  };
  for (const auto& [name, bytes] : c.reads)
    if (Status st = alloc(name, bytes); !st.ok()) return st;
  if (Status st = alloc("dst", c.dst_bytes); !st.ok()) return st;
  for (const auto& [k, v] : c.scalars) args.scalars[k] = v;
  cuda::Event a, b;
  if (Status st = cuda::CreateEvent(a, true); !st.ok()) return st;
  if (Status st = cuda::CreateEvent(b, true); !st.ok()) return st;
  std::vector<double> t;
  for (int r = 0; r < 7; ++r) {
    LOADPLAN_CUDA_TRY(cudaEventRecord(a.get(), stream));
    if (Status st = kernels::LaunchDerive(c.kernel, args, stream); !st.ok())
      return st.WithContext("calibrating " + c.kernel);  // a refused case, or the device
    LOADPLAN_CUDA_TRY(cudaEventRecord(b.get(), stream));
    LOADPLAN_CUDA_TRY(cudaEventSynchronize(b.get()));
    float ms = 0;
    LOADPLAN_CUDA_TRY(cudaEventElapsedTime(&ms, a.get(), b.get()));
    if (r >= 2) t.push_back(ms / 1e3);
  }
  std::sort(t.begin(), t.end());
  seconds = t[t.size() / 2];
  for (cuda::DeviceMemory& m : held)
    if (Status st = m.Free(); !st.ok()) return st;
  return Status::Ok();
}

// Back-to-back launches of a tiny copy: wall time per launch, synchronised at the end.
Status LaunchOverhead(cudaStream_t stream, double& seconds) {
  cuda::DeviceMemory src, dst;
  if (Status st = cuda::AllocateDevice(4096, src); !st.ok()) return st;
  if (Status st = cuda::AllocateDevice(4096, dst); !st.ok()) return st;
  kernels::KernelArgs args;
  args.buffers["src"] = {src.get(), 4096};
  args.buffers["dst"] = {dst.get(), 4096};
  args.scalars["n"] = 4096;
  const int n = 2000;
  for (int r = 0; r < 2; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      if (Status st = kernels::LaunchDerive("copy", args, stream); !st.ok()) return st;
    }
    LOADPLAN_CUDA_TRY(cudaStreamSynchronize(stream));
    seconds = base::SecondsSince(t0) / n;
  }
  Status st = src.Free();
  return st.ok() ? dst.Free() : st;
}

}  // namespace

Status CalibrateKernels(int device, simulator::timing::MachineProfile& p, const Note& note) {
  LOADPLAN_CUDA_TRY(cudaSetDevice(device));
  cuda::Stream stream;
  if (Status st = cuda::CreateStream(stream); !st.ok()) return st;
  std::vector<double> rates;
  std::string line;
  for (const Case& c : Cases()) {
    if (kernels::FindKernel(c.kernel) == nullptr) continue;  // a kernel the registry dropped
    double s = 0;
    if (Status st = TimeCase(c, stream.get(), s); !st.ok()) {
      // A case the kernel refuses leaves that kernel at the default rate; a CUDA error stops.
      if (st.kind() != base::ErrorKind::kInvalidInput) return st;
      note(st.message() + " (left at the default rate)");
      continue;
    }
    uint64_t bytes = c.dst_bytes;
    for (const auto& [name, b] : c.reads) bytes += b;
    p.kernels[c.kernel] = bytes / s;
    rates.push_back(bytes / s);
    line += fmt::format(" {} {:.0f}", c.kernel, bytes / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  p.default_kernel_rate = rates.empty() ? 1e12 : rates[rates.size() / 2];
  for (const kernels::KernelSpec& k : kernels::Kernels()) {
    if (!p.kernels.count(k.name)) line += fmt::format(" ({}: no case, default rate)", k.name);
  }
  if (Status st = LaunchOverhead(stream.get(), p.launch_overhead_s); !st.ok()) return st;
  note(fmt::format("kernels GB/s (read + written):{}; launch {:.1f} us", line,
                   p.launch_overhead_s * 1e6));
  return Status::Ok();
}

}  // namespace loadplan::backend
