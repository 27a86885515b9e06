// Helpers for the derive-kernel tests: run a kernel's CPU reference on host
// bytes, random inputs, the independent dst-size formulas of docs/kernels.md.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/args.h"
#include "kernels/reference.h"

namespace loadplan::kernels::testing {

using Scalars = std::map<std::string, int64_t>;

// Bytes of the dst extent, computed from the recipe's shapes (docs/kernels.md) (not from
// validate_call.cc).
inline uint64_t DstBytes(const std::string& k, const Scalars& s) {
  auto g = [&](const char* n) { return static_cast<uint64_t>(s.at(n)); };
  if (k == "mxfp4_fc1_weight") return g("experts") * 2 * g("i_pad") * (g("k_pad") / 2);
  if (k == "mxfp4_fc1_scales") return g("experts") * 2 * g("i_pad") * (g("k_pad") / 32);
  if (k == "mxfp4_fc1_bias") return g("experts") * 2 * g("i_pad") * 4;
  if (k == "mxfp4_fc2_weight") return g("experts") * g("h_pad") * (g("i_pad") / 2);
  if (k == "mxfp4_fc2_scales") return g("experts") * g("h_pad") * (g("i_pad") / 32);
  if (k == "mxfp4_fc2_bias") return g("experts") * g("h_pad") * 4;
  if (k == "cast_bf16_f32") return g("n") * 4;
  return g("n");  // copy
}

inline uint64_t SrcBytes(const std::string& k, const Scalars& s) {
  auto g = [&](const char* n) { return static_cast<uint64_t>(s.at(n)); };
  if (k == "mxfp4_fc1_bias" || k == "mxfp4_fc2_bias") return g("experts") * g("rows") * 2;
  if (k == "cast_bf16_f32") return g("n") * 2;
  if (k == "copy") return g("n");
  return g("experts") * g("rows") * g("cols");
}

// Random bytes, never 0 (0 becomes 0x5A): a 0 in an output can only be padding.
inline std::vector<uint8_t> RandomBytes(uint64_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937_64 rng(seed);
  uint64_t word = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (i % 8 == 0) word = rng();
    const auto b = static_cast<uint8_t>(word >> (8 * (i % 8)));
    v[i] = b != 0 ? b : 0x5A;
  }
  return v;
}

inline KernelArgs MakeArgs(void* src, uint64_t src_bytes, void* dst, uint64_t dst_bytes,
                           const Scalars& s) {
  KernelArgs a;
  a.buffers["src"] = {src, src_bytes};
  a.buffers["dst"] = {dst, dst_bytes};
  for (const auto& [n, v] : s) a.scalars[n] = v;
  return a;
}

struct RefResult {
  Status status = Status::Ok();
  std::vector<uint8_t> dst;  // poisoned with 0xA5 before the run
};

// Runs the reference; dst gets `slack` extra poisoned bytes past the extent.
inline RefResult RunRef(const std::string& k, const Scalars& s, const std::vector<uint8_t>& src,
                        uint64_t slack = 0) {
  RefResult r;
  r.dst.assign(DstBytes(k, s) + slack, 0xA5);
  auto* in = const_cast<uint8_t*>(src.data());  // BufferArg is untyped; the kernel only reads src
  r.status = RunReference(k, MakeArgs(in, src.size(), r.dst.data(), r.dst.size(), s));
  return r;
}

// Gpt-oss-120b shapes (I = H = 2880, pads 2944) for `experts` experts.
inline Scalars GptOss(const std::string& k, int64_t experts) {
  const bool fc1 = k.find("fc1") != std::string::npos;
  const bool weight = k.find("weight") != std::string::npos,
             bias = k.find("bias") != std::string::npos;
  Scalars s = {{"experts", experts}, {"rows", fc1 ? 5760 : 2880}};
  if (fc1 || !bias) s["i_pad"] = 2944;
  if (!bias) s["cols"] = weight ? 1440 : 90;
  if (fc1 && !bias) s["k_pad"] = 2944;
  if (!fc1) s["h_pad"] = 2944;
  return s;
}

// I = H = n with all pads `pad` for the mxfp4_fc* kernel k.
inline Scalars Square(const std::string& k, int64_t experts, int64_t n, int64_t pad) {
  const bool fc1 = k.find("fc1") != std::string::npos,
             scales = k.find("scales") != std::string::npos;
  const bool bias = k.find("bias") != std::string::npos;
  Scalars s = {{"experts", experts}, {"rows", fc1 ? 2 * n : n}};
  if (fc1 || !bias) s["i_pad"] = pad;
  if (!bias) s["cols"] = scales ? (n + 31) / 32 : n / 2;
  if (fc1 && !bias) s["k_pad"] = pad;
  if (!fc1) s["h_pad"] = pad;
  return s;
}

}  // namespace loadplan::kernels::testing
