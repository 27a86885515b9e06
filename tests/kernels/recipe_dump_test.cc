// Writes CPU-reference inputs and outputs of every MXFP4 kernel as .npy files
// plus cases.txt, for scripts/recipe_check.py, which recomputes the recipe from
// the recipe text (docs/kernels.md) with numpy and compares. Directory: $LOADPLAN_RECIPE_DIR
// (then gpt-oss-120b sized cases are added), else a temporary one (small cases,
// so the writer itself stays tested).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
