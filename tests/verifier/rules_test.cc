// Every rule fires on its minimal bad manifest (tests/data/rules/<code>*.json) at the
// expected pointer and nothing else does; the clean manifests fire nothing.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "verifier/verify.h"

namespace loadplan::verifier {
namespace {

using Fired = std::set<std::pair<std::string, std::string>>;  // {code, pointer}

struct Case {
  std::string file;  // under tests/data/rules/, without .json
  Fired expected;
  int max_boxes = ProofBudget{}.max_boxes;  // the proof budget the case runs with
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> kCases = {
      {"clean_base", {}},
      {"clean_realistic", {}},
      {"clean_collectives", {}},
      // mxfp4_experts_bf16 and fp8_block_bf16 declared as their importer writes them (no P9),
      // called validly: the ceil_div scales extent (300 x 200 in 128 blocks: 3 x 2) proved
      {"clean_dequant_bf16", {}},
      // a source bound by a list of whole tensors read one after another
      {"clean_tensors", {}},
      // schema 2: two disjoint dim-0 slices of one tensor, a column slice of BF16, a row slice
      // of F4 on whole bytes, an MXFP4 block slice on whole 16-byte blocks
      {"clean_slices", {}},
      {"S6_kernel", {{"S6", "/programs/serve/calls/0/kernel"}}},
      {"S6_buffer", {{"S6", "/programs/serve/calls/0/args/x"}}},
      {"S6_shape_var", {{"S6", "/buffers/y/shape/0"}}},
      {"S6_batch", {{"S6", "/programs/serve/batch"}}},
      {"S6_collective", {{"S6", "/programs/sync/calls/0/buffer"}}},
      {"S6_scalar_var", {{"S6", "/programs/serve/calls/0/args/b"}}},
      {"S6_grid_var", {{"S6", "/programs/serve/calls/0/grid/0"}}},
      {"S8_min_gt_max", {{"S8", "/vars/batch"}}},
      {"S8_negative", {{"S8", "/vars/batch/min"}}},
      {"S9_overflow", {{"S9", "/buffers/big/shape"}}},
      {"S9_div_zero", {{"S9", "/buffers/q/shape"}}},
      {"K1_missing", {{"K1", "/buffers/w.raw"}}},
      {"K1_extra", {{"K1", "/buffers/w/tensor"}}},
      {"K1_tensors", {{"K1", "/buffers/w/tensors"}}},  // a carry with a list
      {"K2_written", {{"K2", "/programs/derive.w/calls/1/args/dst"}}},
      {"K2_serving_read", {{"K2", "/programs/peek/calls/0/args/src"}}},
      {"K3", {{"K3", "/buffers/w.raw/export"}}},
      {"K4", {{"K4", "/programs/init/calls/0/args/dst"}}},
      {"K5_weight", {{"K5", "/buffers/v/shape/0"}}},
      {"K5_carry", {{"K5", "/buffers/w/shape/0"}}},
      {"K6", {{"K6", "/buffers/w2/tensor"}}},
      {"K6_list", {{"K6", "/buffers/w2/tensors/1"}}},  // w.raw's tensor as a list item of w2
      {"K7_kind", {{"K7", "/buffers/w/lane"}}},
      {"K7_range", {{"K7", "/buffers/w.raw/lane"}}},
      {"K8", {{"K8", "/buffers/q4/shape"}}},  // q6: 4 F6 elements are 3 whole bytes
      {"K9", {{"K9", "/buffers/w.raw/tensors"}}},
      {"K10", {{"K10", "/buffers/w.raw/tensors"}}},
      {"K11", {{"K11", "/buffers/w.raw/tensors/2"}}},  // the repeat, not the first
      {"K12", {{"K12", "/buffers/w/slice"}}},          // a carry with a slice
      {"K13_dim", {{"K13", "/buffers/w.raw/slice/dim"}}},
      {"K13_length", {{"K13", "/buffers/w.raw/slice/length"}}},
      {"K13_extent", {{"K13", "/buffers/w.raw/slice/start"}}},  // [8, 24) of a 16-long dim
      {"K14", {{"K14", "/buffers/q4/slice"}}},                  // F4 rows of 12 bits
      {"K14_block", {{"K14", "/buffers/b/slice"}}},             // half an MXFP4 block
      {"K15", {{"K15", "/buffers/w.raw/slice"}}},               // a slice in a schema-1 manifest
      {"K6_slices", {{"K6", "/buffers/w.raw/slice"}}},          // overlapping slices of one tensor
      // lanes 0 is S11 alone: the pinned lane 1 is not checked against a lanes that failed
      {"S11_lanes_pinned", {{"S11", "/load/lanes"}}},
      {"S3_load_pinned", {{"S3", "/load"}}},  // "load": 5: no lanes value either, so no K7
      {"P1_once", {{"P1", "/programs/derive.w/once"}}},
      {"P1_batch", {{"P1", "/programs/derive.w/batch"}}},
      {"P1_graph", {{"P1", "/programs/derive.w/graph"}}},
      {"P2", {{"P2", "/programs/derive.w/calls/1/args/dst"}}},
      {"P3", {{"P3", "/programs/derive.w/calls/1"}}},
      {"P3_carry", {{"P3", "/programs/derive.w/calls/1"}}},
      // over a carry with a variable shape: still P3 alone (the collective is no derive write for
      // K5)
      {"P3_variable_carry", {{"P3", "/programs/derive.w/calls/1"}}},
      {"P4_scalar", {{"P4", "/programs/derive.w/calls/0/args/n"}}},
      {"P4_grid", {{"P4", "/programs/derive.w/calls/0/grid/0"}}},
      {"P5_missing", {{"P5", "/programs/derive.w/calls/0/args"}}},
      // no "args" at all: each missing argument at the call (found by the totality property)
      {"P5_no_args", {{"P5", "/programs/check/calls/0"}}},
      {"P5_extra", {{"P5", "/programs/derive.w/calls/0/args/m"}}},
      {"P5_scalar_for_buffer", {{"P5", "/programs/serve/calls/0/args/x"}}},
      {"P5_expr_for_buffer", {{"P5", "/programs/serve/calls/0/args/x"}}},
      {"P5_buffer_for_scalar", {{"P5", "/programs/derive.w/calls/0/args/n"}}},
      {"P6", {{"P6", "/programs/derive.w/calls/0/args/src"}}},
      {"P7_unknown_name", {{"P7", "/kernels/copy/params/src/extent"}}},
      {"P7_buffer_name", {{"P7", "/kernels/copy/params/src/extent"}}},
      {"P7_no_extent", {{"P7", "/kernels/apply/params/w"}}},
      {"P8_no_calls", {{"P8", "/programs/idle/calls"}}},
      {"P8_grid_zero", {{"P8", "/programs/derive.w/calls/0/grid/0"}}},
      // registry kernels: `copy` declared with another extent tree / an extra parameter
      {"P9_extent", {{"P9", "/kernels/copy/params/src/extent"}}},
      {"P9_extra_param", {{"P9", "/kernels/copy/params/m"}}},
      // a derive mxfp4_dequant with cols = 48; a serving copy with n = batch - 2 (< 0 at batch = 1)
      {"P10", {{"P10", "/programs/derive.q/calls/0/args/cols"}}},
      {"P10_variable", {{"P10", "/programs/peek/calls/0/args/n"}}},
      {"P10_experts_cols", {{"P10", "/programs/derive.e/calls/0/args/cols"}}},
      // block_rows = 0 also leaves the scales extent ceil_div(rows, 0) undefined (S9)
      {"P10_fp8_block_rows",
       {{"P10", "/programs/derive.f/calls/0/args/block_rows"},
        {"S9", "/programs/derive.f/calls/0/args/scales"}}},
      {"D1", {{"D1", "/programs/a"}}},
      {"D2_serving_writer", {{"D2", "/programs/d/calls/0/args/src"}}},
      {"D2_writer_later", {{"D2", "/programs/d/calls/0/args/src"}}},
      {"D2_unwritten", {{"D2", "/programs/d/calls/0/args/src"}}},
      {"D3", {{"D3", "/programs/derive.w/calls/1/args/dst"}}},
      {"D4", {{"D4", "/programs/derive.w/calls/0/args/dst"}}},
      // A read past the written prefix needs a short write: D5 comes with its D4.
      {"D5",
       {{"D4", "/programs/derive.w/calls/0/args/dst"},
        {"D5", "/programs/derive.x/calls/0/args/src"}}},
      {"B1", {{"B1", "/programs/serve/calls/0/args/y"}}},
      // fp8 scales [2, 2] where ceil_div(300, 128) * ceil_div(200, 128) = 6 are read
      {"B1_fp8_scales", {{"B1", "/programs/derive.f/calls/0/args/scales"}}},
      // True (n*(1024-n) peaks at 262144 at n=512) but not monotone: a budget of 2 boxes cannot
      // tell.
      {"B2", {{"B2", "/programs/f/calls/0/args/dst"}}, 2},
      {"L1", {{"L1", "/buffers/nw"}}},
      {"L2", {{"L2", "/buffers/u"}}},
      {"L3", {{"L3", "/buffers/c"}}},
  };
  return kCases;
}

std::filesystem::path DataDir() {
  return std::filesystem::path(LOADPLAN_SOURCE_DIR) / "tests/data/rules";
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Describe(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const Diagnostic& d : diags)
    out += "  " + d.code + " " + d.pointer + ": " + d.message + "\n";
  return out;
}

class RuleFixture : public testing::TestWithParam<Case> {};

TEST_P(RuleFixture, FiresExactlyTheExpectedCodes) {
  const Case& c = GetParam();
  std::string text = ReadFile(DataDir() / (c.file + ".json"));
  ASSERT_FALSE(text.empty()) << c.file;
  CheckOutput out = CheckText(text, VerifyOptions{.budget = {.max_boxes = c.max_boxes}});
  ASSERT_TRUE(out.parsed) << c.file;
  Fired fired;
  for (const Diagnostic& d : out.result.diags) fired.insert({d.code, d.pointer});
  EXPECT_EQ(fired, c.expected) << c.file << " fired:\n" << Describe(out.result.diags);
  EXPECT_EQ(out.result.diags.size(), c.expected.size()) << Describe(out.result.diags);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RuleFixture, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.file;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// Every fixture file is in the table, and every rule code this verifier emits has one.
TEST(RuleFixtures, TableCoversEveryFileAndCode) {
  std::set<std::string> files, listed, codes;
  for (const auto& e : std::filesystem::directory_iterator(DataDir())) {
    if (e.path().extension() == ".json") files.insert(e.path().stem().string());
  }
  for (const Case& c : Cases()) {
    listed.insert(c.file);
    for (const auto& [code, ptr] : c.expected) codes.insert(code);
  }
  EXPECT_EQ(files, listed);
  const std::set<std::string> emitted = {
      "S3",  "S6",  "S8",  "S9",  "S11", "K1",  "K2", "K3", "K4", "K5", "K6", "K7", "K8", "K9",
      "K10", "K11", "K12", "K13", "K14", "K15", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8",
      "P9",  "P10", "D1",  "D2",  "D3",  "D4",  "D5", "B1", "B2", "L1", "L2", "L3"};
  EXPECT_EQ(codes, emitted);
}

// Lints are warnings: a manifest with only lints still verifies.
TEST(RuleFixtures, LintsAreWarnings) {
  for (std::string f : {"L1", "L2", "L3"}) {
    CheckOutput out = CheckText(ReadFile(DataDir() / (f + ".json")));
    ASSERT_EQ(out.result.diags.size(), 1u) << f;
    EXPECT_EQ(out.result.diags[0].severity, Severity::kWarning) << f;
    EXPECT_TRUE(out.result.ok()) << f;
  }
}

}  // namespace
}  // namespace loadplan::verifier
