// Writes CPU-reference inputs and outputs of every MXFP4 kernel (and fp8_block_bf16) as .npy files
// plus cases.txt, for scripts/dev/recipe_check.py, which recomputes the recipe from
// the recipe text (docs/kernels.md) with numpy and compares. Directory: $LOADPLAN_RECIPE_DIR
// (then gpt-oss-120b sized cases are added), else a temporary one (small cases,
// so the writer itself stays tested).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace loadplan::kernels {
namespace {

using testing::Scalars;

// A one-dimensional .npy (format 1.0) of `count` items of numpy type `descr`.
void WriteNpy(const std::filesystem::path& path, const std::vector<uint8_t>& bytes,
              const std::string& descr, uint64_t count) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(count) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_le[2] = {static_cast<char>(len & 0xFF), static_cast<char>(len >> 8)};
  out.write(len_le, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string Describe(const std::string& name, const std::string& kernel, const Scalars& s) {
  std::string line = name + " " + kernel;
  for (const auto& [k, v] : s) line += " " + k + "=" + std::to_string(v);
  return line + "\n";
}

// Runs the reference of an mxfp4_fc* kernel on random bytes; writes src and dst.
void DumpRowCase(const std::filesystem::path& dir, const std::string& name,
                 const std::string& kernel, const Scalars& s, uint64_t seed, std::ofstream& cases) {
  const bool bias = kernel.find("bias") != std::string::npos;
  std::vector<uint8_t> src = testing::RandomBytes(testing::SrcBytes(kernel, s), seed);
  if (bias) {  // realistic biases: finite BF16 values (exponent field cleared of its top bit)
    for (size_t i = 1; i < src.size(); i += 2) src[i] &= 0xBF;
  }
  const testing::RefResult r = testing::RunRef(kernel, s, src);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  WriteNpy(dir / (name + ".src.npy"), src, bias ? "<u2" : "|u1", src.size() / (bias ? 2 : 1));
  WriteNpy(dir / (name + ".dst.npy"), r.dst, bias ? "<u4" : "|u1", r.dst.size() / (bias ? 4 : 1));
  cases << Describe(name, kernel, s);
}

void DumpDequantCase(const std::filesystem::path& dir, const std::string& name, int64_t rows,
                     int64_t cols, uint64_t seed, std::ofstream& cases) {
  std::vector<uint8_t> blocks = testing::RandomBytes(rows * cols / 2, seed);
  std::vector<uint8_t> scales = testing::RandomBytes(rows * cols / 32, seed + 1);
  for (size_t g = 0; g < scales.size() && g < 256; ++g)
    scales[g] = static_cast<uint8_t>(g);  // every code
  std::vector<uint8_t> dst(rows * cols * 2, 0xA5);
  KernelArgs a;
  a.buffers = {{"blocks", {blocks.data(), blocks.size()}},
               {"scales", {scales.data(), scales.size()}},
               {"dst", {dst.data(), dst.size()}}};
  a.scalars = {{"rows", rows}, {"cols", cols}};
  ASSERT_TRUE(RunReference("mxfp4_dequant", a).ok());
  WriteNpy(dir / (name + ".blocks.npy"), blocks, "|u1", blocks.size());
  WriteNpy(dir / (name + ".scales.npy"), scales, "|u1", scales.size());
  WriteNpy(dir / (name + ".dst.npy"), dst, "<u2", dst.size() / 2);
  cases << Describe(name, "mxfp4_dequant", {{"rows", rows}, {"cols", cols}});
}

// Runs the reference of a kernel with `reads` (buffer name -> bytes, numpy descr); writes each
// read buffer, then dst as BF16 (`<u2`).
struct Read {
  std::vector<uint8_t> bytes;
  std::string descr;  // "|u1", "<f4"
  uint64_t item = 1;  // bytes per item
};
void DumpBf16Case(const std::filesystem::path& dir, const std::string& name,
                  const std::string& kernel, const Scalars& s, std::map<std::string, Read> reads,
                  uint64_t dst_elems, std::ofstream& cases) {
  std::vector<uint8_t> dst(dst_elems * 2, 0xA5);
  KernelArgs a;
  for (auto& [n, r] : reads) {
    a.buffers[n] = {r.bytes.data(), r.bytes.size()};
    WriteNpy(dir / (name + "." + n + ".npy"), r.bytes, r.descr, r.bytes.size() / r.item);
  }
  a.buffers["dst"] = {dst.data(), dst.size()};
  for (const auto& [k, v] : s) a.scalars[k] = v;
  const Status st = RunReference(kernel, a);
  ASSERT_TRUE(st.ok()) << st.message();
  WriteNpy(dir / (name + ".dst.npy"), dst, "<u2", dst_elems);
  cases << Describe(name, kernel, s);
}

// mxfp4_experts_bf16: random blocks, the first 256 scale groups every E8M0 code (0xFF too).
void DumpExpertsCase(const std::filesystem::path& dir, const std::string& name, int64_t experts,
                     int64_t rows, int64_t cols, uint64_t seed, std::ofstream& cases) {
  const auto elems = static_cast<uint64_t>(experts * rows * cols);
  Read scales{testing::RandomBytes(elems / 32, seed + 1), "|u1"};
  for (size_t g = 0; g < scales.bytes.size() && g < 256; ++g)
    scales.bytes[g] = static_cast<uint8_t>(g);
  DumpBf16Case(dir, name, "mxfp4_experts_bf16",
               {{"experts", experts}, {"rows", rows}, {"cols", cols}},
               {{"blocks", {testing::RandomBytes(elems / 2, seed), "|u1"}}, {"scales", scales}},
               elems, cases);
}

// fp8_block_bf16: random E4M3 codes (NaN included); scales about 2^-10 with random mantissas,
// except the first four: NaN, infinity, 2^-126 (subnormal products) and 2^120 (overflow).
void DumpFp8Case(const std::filesystem::path& dir, const std::string& name, int64_t rows,
                 int64_t cols, int64_t block, uint64_t seed, std::ofstream& cases) {
  const int64_t n_scales = ((rows + block - 1) / block) * ((cols + block - 1) / block);
  std::vector<uint8_t> sc = testing::RandomBytes(4 * n_scales, seed + 1);
  const uint32_t special[4] = {0x7FC00000u, 0x7F800000u, 0x00800000u, 0x7B800000u};
  for (int64_t i = 0; i < n_scales; ++i) {
    uint32_t b = 0;
    std::memcpy(&b, &sc[4 * i], 4);
    b = i < 4 ? special[i] : 0x3A000000u | (b & 0x00FFFFFFu);
    std::memcpy(&sc[4 * i], &b, 4);
  }
  DumpBf16Case(
      dir, name, "fp8_block_bf16",
      {{"rows", rows}, {"cols", cols}, {"block_rows", block}, {"block_cols", block}},
      {{"src", {testing::RandomBytes(rows * cols, seed), "|u1"}}, {"scales", {sc, "<f4", 4}}},
      static_cast<uint64_t>(rows * cols), cases);
}

TEST(RecipeDump, WritesEveryKernelsCase) {
  const char* env = std::getenv("LOADPLAN_RECIPE_DIR");
  const std::filesystem::path dir = env != nullptr ? env : ::testing::TempDir() + "loadplan_recipe";
  std::filesystem::create_directories(dir);
  std::ofstream cases(dir / "cases.txt");
  const std::vector<std::string> kernels = {"mxfp4_fc1_weight", "mxfp4_fc1_scales",
                                            "mxfp4_fc1_bias",   "mxfp4_fc2_weight",
                                            "mxfp4_fc2_scales", "mxfp4_fc2_bias"};
  uint64_t seed = 1000;
  for (const std::string& k : kernels) {
    DumpRowCase(dir, "small." + k, k, testing::Square(k, 3, 200, 256), ++seed, cases);
    DumpRowCase(dir, "tiny." + k, k, testing::Square(k, 2, 96, 128), ++seed, cases);
    if (env != nullptr) DumpRowCase(dir, "gptoss." + k, k, testing::GptOss(k, 2), ++seed, cases);
  }
  DumpDequantCase(dir, "small.mxfp4_dequant", 64, 2880, ++seed, cases);
  DumpExpertsCase(dir, "small.mxfp4_experts_bf16", 3, 90, 2880, ++seed, cases);
  DumpExpertsCase(dir, "odd.mxfp4_experts_bf16", 2, 33, 96, ++seed, cases);
  DumpFp8Case(dir, "small.fp8_block_bf16", 300, 200, 128, ++seed, cases);
  if (env != nullptr) {
    DumpExpertsCase(dir, "gptoss.mxfp4_experts_bf16", 2, 5760, 2880, ++seed, cases);
    DumpFp8Case(dir, "deepseek.fp8_block_bf16", 2048, 7168, 128, ++seed, cases);
  }
  cases.close();
  // The files read back as numpy would: magic, a 64-byte aligned header, then the data.
  std::ifstream in(dir / "tiny.mxfp4_fc1_weight.dst.npy", std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 6), "\x93NUMPY");
  const size_t header = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header +
                              testing::DstBytes("mxfp4_fc1_weight",
                                                testing::Square("mxfp4_fc1_weight", 2, 96, 128)));
  EXPECT_EQ(bytes[10 + header - 1], '\n');
}

}  // namespace
}  // namespace loadplan::kernels
