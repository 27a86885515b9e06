// Canonical writer: parse -> write -> parse is the identity, write -> parse ->
// write is byte-identical, and the golden tests/data/canonical/tiny.json is a fixed point.
#include "verifier/writer.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verifier/parse.h"

namespace loadplan::verifier {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string Describe(const ParseOutput& out) {
  std::string s;
  for (const Diagnostic& d : out.diags) s += d.code + " " + d.pointer + ": " + d.message + "\n";
  return s;
}

// Hand-written manifests in non-canonical form: shuffled keys, defaults spelt out,
// strings for constant dims, unusual names.
const std::vector<std::string> kManifests = {
    R"json({"name": "minimal", "schema": 1})json",
    R"json({"schema": 1, "name": "defaults", "load": {"lanes": 1, "prefetch": 0},
        "programs": {"p": {"derive": false, "once": false, "graph": false, "calls": [
          {"kernel": "k", "args": {}, "grid": [" 4 "]}]}}})json",
    R"json({"programs": {"serve": {"batch": "b", "once": true, "graph": true, "calls": [
          {"collective": "broadcast", "buffer": "x/y~z"},
          {"kernel": "gemm", "block": [256, 1], "grid": ["ceil_div(b, 128)", "max(b, 2) - 1", 1],
           "args": {"m": "b*4096", "a": "x/y~z", "n": -7, "k": "b"}}]}},
        "kernels": {"gemm": {"params": {"n": "scalar", "m": "scalar", "k": "scalar",
                                        "a": {"extent": "m*k", "dtype": "F8_E4M3", "access": "readwrite"},
                                        "b": {"access": "read", "dtype": "F4"}}}},
        "buffers": {"x/y~z": {"shape": ["b", "min(b, 8)", 4096], "dtype": "F8_E4M3", "kind": "peer"},
                    "w": {"tensor": "m.w\t\u0001", "kind": "weight", "lane": 3, "dtype": "U8", "shape": [],
                          "encoding": "e8m0", "export": true}},
        "vars": {"b": {"max": 1024, "min": 0}},
        "load": {"prefetch": 2},
        "name": "unicode \u00e9\u4e2d \"quoted\" \\", "schema": 1})json",
    R"json({"schema": 1, "name": "parts", "buffers": {
        "e": {"tensors": ["m.e.1", "m.e.0"], "shape": [2, 4], "dtype": "BF16", "kind": "source"},
        "f": {"kind": "weight", "dtype": "U8", "shape": [64], "lane": 0, "encoding": "e8m0",
              "tensors": ["model.layers.0.mlp.experts.0.gate_proj.weight", "model.layers.0.mlp.experts.0.up_proj.weight",
                          "x\t\u0001", "model.layers.0.mlp.experts.1.gate_proj.weight"]},
        "g": {"kind": "weight", "dtype": "U8", "shape": [1], "tensors": []},
        "h": {"kind": "carry", "dtype": "U8", "shape": [1], "tensor": "t", "tensors": ["u"]}}})json",
    R"json({"schema": 2, "name": "slices", "buffers": {
        "q": {"tensor": "qkv", "slice": {"start": 0, "length": 8, "dim": 0}, "shape": [8, 4], "dtype": "BF16", "kind": "weight"},
        "k": {"kind": "weight", "dtype": "BF16", "shape": [4, 4], "tensor": "qkv", "slice": {"dim": 0, "start": 8, "length": 4}},
        "o": {"kind": "weight", "dtype": "BF16", "shape": [4, 2], "tensor": "o", "slice": {"extent": 8, "dim": 1, "start": 2, "length": 2}}}})json",
};

TEST(Writer, ParseWriteParseIsTheIdentity) {
  for (const std::string& text : kManifests) {
    ParseOutput first = ParseManifest(text);
    ASSERT_TRUE(first.manifest) << text;
    ASSERT_TRUE(first.diags.empty()) << Describe(first);
    std::string written = WriteManifest(*first.manifest);
    ParseOutput second = ParseManifest(written);
    ASSERT_TRUE(second.manifest) << written;
    EXPECT_TRUE(second.diags.empty()) << Describe(second) << written;
    EXPECT_EQ(*second.manifest, *first.manifest) << written;
    EXPECT_EQ(WriteManifest(*second.manifest), written);
  }
}

TEST(Writer, OmitsDefaultsAndKeepsShortArraysOnOneLine) {
  std::string out = WriteManifest(*ParseManifest(kManifests[1]).manifest);
  EXPECT_EQ(out,
            "{\n"
            "  \"name\": \"defaults\",\n"
            "  \"programs\": {\n"
            "    \"p\": {\n"
            "      \"calls\": [\n"
            "        {\"grid\": [4], \"kernel\": \"k\"}\n"
            "      ]\n"
            "    }\n"
            "  },\n"
            "  \"schema\": 1\n"
            "}\n");
  EXPECT_EQ(WriteManifest(*ParseManifest(kManifests[0]).manifest),
            "{\"name\": \"minimal\", \"schema\": 1}\n");
}

// "tensors" sorts after "tensor" and lays out like "shape": the buffer on one line when it
// fits, else one member per line and the list on one line when it fits there, else one name
// per line.
TEST(Writer, TensorsListLaysOutLikeAShape) {
  const std::string out = WriteManifest(*ParseManifest(kManifests[3]).manifest);
  EXPECT_NE(out.find(R"(    "e": {"dtype": "BF16", "kind": "source", "shape": [2, 4], )"
                     R"("tensors": ["m.e.1", "m.e.0"]},)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("    \"f\": {\n"
                     "      \"dtype\": \"U8\",\n"
                     "      \"encoding\": \"e8m0\",\n"
                     "      \"kind\": \"weight\",\n"
                     "      \"lane\": 0,\n"
                     "      \"shape\": [64],\n"
                     "      \"tensors\": [\n"
                     "        \"model.layers.0.mlp.experts.0.gate_proj.weight\",\n"
                     "        \"model.layers.0.mlp.experts.0.up_proj.weight\",\n"
                     "        \"x\\t\\u0001\",\n"
                     "        \"model.layers.0.mlp.experts.1.gate_proj.weight\"\n"
                     "      ]\n"
                     "    },\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("g": {"dtype": "U8", "kind": "weight", "shape": [1], "tensors": []},)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("h": {"dtype": "U8", "kind": "carry", "shape": [1], "tensor": "t", )"
                     R"("tensors": ["u"]})"),
            std::string::npos)
      << out;
}

// A slice prints between shape and tensor, its keys sorted; a manifest with one is schema 2,
// one without stays as it was read (every schema-1 file prints unchanged).
TEST(Writer, SlicesPrintSortedAndMakeSchemaTwo) {
  const std::string out = WriteManifest(*ParseManifest(kManifests[4]).manifest);
  EXPECT_NE(out.find("    \"q\": {\n"
                     "      \"dtype\": \"BF16\",\n"
                     "      \"kind\": \"weight\",\n"
                     "      \"shape\": [8, 4],\n"
                     "      \"slice\": {\"dim\": 0, \"length\": 8, \"start\": 0},\n"
                     "      \"tensor\": \"qkv\"\n"
                     "    }\n"),
            std::string::npos)
      << out;
  EXPECT_NE(
      out.find("      \"slice\": {\"dim\": 1, \"extent\": 8, \"length\": 2, \"start\": 2},\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("\"schema\": 2"), std::string::npos) << out;
  Manifest m = *ParseManifest(kManifests[4]).manifest;
  m.schema = 1;  // a builder's manifest: schema 2 is written because of the slice
  EXPECT_NE(WriteManifest(m).find("\"schema\": 2"), std::string::npos);
  for (Buffer& b : m.buffers) b.slice.reset();
  EXPECT_NE(WriteManifest(m).find("\"schema\": 1"), std::string::npos);
}

TEST(Writer, GoldenTinyIsAFixedPoint) {
  const std::string golden =
      ReadFile(std::string(LOADPLAN_SOURCE_DIR) + "/tests/data/canonical/tiny.json");
  ParseOutput out = ParseManifest(golden);
  ASSERT_TRUE(out.manifest);
  EXPECT_TRUE(out.diags.empty()) << Describe(out);
  EXPECT_EQ(WriteManifest(*out.manifest), golden);
}

TEST(Writer, BuilderModelsWithoutPointersWriteTheSame) {
  // A model built in code (no pointers, unsorted) writes like its parsed twin.
  Manifest m;
  m.name = "built";
  m.vars.push_back(Variable{.name = "z", .min = 1, .max = 2});
  m.vars.push_back(Variable{.name = "a", .min = 0, .max = 5});
  std::string written = WriteManifest(m);
  ParseOutput back = ParseManifest(written);
  ASSERT_TRUE(back.manifest);
  AssignPointers(m);
  EXPECT_EQ(*back.manifest, m);
}

TEST(Writer, DocsExampleIsCanonical) {
  // docs/manifest.md is normative: its full example must parse cleanly and be in canonical form.
  const std::string doc = ReadFile(std::string(LOADPLAN_SOURCE_DIR) + "/docs/manifest.md");
  const size_t begin = doc.find("```json\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const std::string example = doc.substr(begin + 8, end - begin - 8);
  ParseOutput out = ParseManifest(example);
  ASSERT_TRUE(out.manifest);
  EXPECT_TRUE(out.diags.empty()) << Describe(out);
  EXPECT_EQ(WriteManifest(*out.manifest), example);
}

}  // namespace
}  // namespace loadplan::verifier
