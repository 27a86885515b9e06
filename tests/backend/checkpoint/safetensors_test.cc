// safetensors reader: one crafted file per validation rule, round trips, bindings,
// and interoperability with the reference Python package (when the venv exists).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors.h"
#include "backend/checkpoint/safetensors_write.h"
#include "base/status_lines.h"
#include "verifier/parse.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lp_st_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes 8-byte length (or `len_override`), the header, and `data_bytes` bytes of data.
  std::string Craft(const std::string& header, uint64_t data_bytes,
                    std::optional<uint64_t> len_override = {}) {
    const std::string path = (dir_ / "x.safetensors").string();
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = len_override.value_or(header.size());
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
    out << header << std::string(data_bytes, '\x5a');
    return path;
  }
  std::string OpenError(const std::string& header, uint64_t data_bytes) {
    return SafetensorsFile::Open(Craft(header, data_bytes)).status().message();
  }
  fs::path dir_;
};

TEST_F(SafetensorsTest, AcceptsValidFile) {
  auto r = SafetensorsFile::Open(Craft(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},"a":{"dtype":"U8","shape":[2,4],"data_offsets":[0,8]}})",
      12));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->tensors().size(), 2u);
  EXPECT_EQ((*r)->tensors()[0].name, "a");  // sorted by offset
  EXPECT_EQ((*r)->metadata().at("format"), "pt");
  ASSERT_NE((*r)->Find("b"), nullptr);
  EXPECT_EQ((*r)->ReadAll(*(*r)->Find("b"))->size(), 4u);
}

TEST_F(SafetensorsTest, FileShorterThanEightBytes) {
  const std::string path = (dir_ / "short.safetensors").string();
  std::ofstream(path) << "abc";
  EXPECT_NE(SafetensorsFile::Open(path).status().message().find("shorter than the 8-byte"),
            std::string::npos);
}

TEST_F(SafetensorsTest, HeaderLengthOverLimit) {
  auto r = SafetensorsFile::Open(Craft("{}", 0, 100'000'001));
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
  EXPECT_NE(r.status().message().find("over the 100000000 byte limit"), std::string::npos)
      << r.status().message();
}

TEST_F(SafetensorsTest, HeaderLengthPastEnd) {
  auto r = SafetensorsFile::Open(Craft("{}", 0, 4096));
  EXPECT_NE(r.status().message().find("past the end"), std::string::npos) << r.status().message();
}

struct BadCase {
  const char* name;
  std::string header;
  uint64_t data_bytes;
  const char* expect;  // a fragment of the message
};

class SafetensorsBadHeader : public SafetensorsTest,
                             public ::testing::WithParamInterface<BadCase> {};

TEST_P(SafetensorsBadHeader, RejectsWithReason) {
  const BadCase& c = GetParam();
  const std::string err = OpenError(c.header, c.data_bytes);
  EXPECT_NE(err.find(c.expect), std::string::npos) << c.name << ": " << err;
  EXPECT_NE(err.find("x.safetensors"), std::string::npos) << "names the file: " << err;
}

const BadCase kBadCases[] = {
    {"not_utf8", "{\"a\xff\":{}}", 0, "UTF-8"},
    {"not_object_start", " []", 0, "does not start with '{'"},
    {"not_json", "{\"a\":", 0, "not the expected JSON"},
    {"unknown_dtype", R"({"a":{"dtype":"U7","shape":[1],"data_offsets":[0,1]}})", 1,
     "unknown dtype U7"},
    {"negative_dim", R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1,
     "non-negative"},
    {"metadata_not_strings", R"({"__metadata__":{"k":1}})", 0, "__metadata__"},
    {"missing_offsets", R"({"a":{"dtype":"U8","shape":[1]}})", 1, "missing data_offsets"},
    {"not_from_zero", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", 2, "a gap"},
    {"gap",
     R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
     3, "a gap"},
    {"overlap",
     R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
     3, "an overlap"},
    {"end_before_begin",
     R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}})",
     1, "end before they begin"},
    {"overflow", R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8,
     "overflows 64 bits"},
    {"sub_byte", R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2,
     "do not fill whole bytes"},
    {"length_mismatch", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 4, "needs 8"},
    {"trailing_bytes", R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 5,
     "trailing bytes"},
    {"missing_bytes", R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})", 4,
     "missing bytes"},
    {"duplicate_tensor",
     R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})",
     1, "not the expected JSON"},
    // The SAX reader reports what the tree reader did (each check, in its order).
    {"duplicate_field", R"({"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1,
     "not the expected JSON"},
    {"duplicate_deep", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":{"k":1,"k":2}}})",
     1, "not the expected JSON"},
    {"too_deep", R"({"a":{"x":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}})", 0, "not the expected JSON"},
    {"entry_scalar", R"({"a":3})", 0, "tensor 'a': entry is not an object"},
    {"entry_array", R"({"a":[1]})", 0, "tensor 'a': entry is not an object"},
    {"dtype_not_string", R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,1]}})", 1,
     "unknown dtype (not a string)"},
    {"missing_dtype_first", R"({"a":{"shape":"x"}})", 0, "missing dtype"},
    {"shape_not_array", R"({"a":{"dtype":"U8","shape":{"n":1},"data_offsets":[0,1]}})", 1,
     "shape is not an array"},
    {"shape_nested", R"({"a":{"dtype":"U8","shape":[[1]],"data_offsets":[0,1]}})", 1,
     "not a non-negative integer"},
    {"shape_float", R"({"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}})", 1,
     "not a non-negative integer"},
    {"shape_huge", R"({"a":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,1]}})", 1,
     "not a non-negative integer"},
    {"offsets_one", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1,
     "data_offsets is not [begin, end]"},
    {"offsets_three", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}})", 1,
     "data_offsets is not [begin, end]"},
    {"offsets_string", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,"1"]}})", 1,
     "data_offsets are not non-negative integers"},
    {"metadata_array", R"({"__metadata__":["x"]})", 0, "__metadata__ is not an object of strings"},
    {"metadata_string", R"({"__metadata__":"x"})", 0, "__metadata__ is not an object of strings"},
    {"first_member_wins",
     R"({"a":{"dtype":"U7","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U9","shape":[1],"data_offsets":[1,2]}})",
     2, "unknown dtype U7"},
    {"syntax_after_entry_error", R"({"a":{"dtype":"U7","shape":[1],"data_offsets":[0,1]},"b":)", 1,
     "not the expected JSON"},
};

TEST_F(SafetensorsTest, IgnoresUnknownFieldsAndNullMetadata) {
  const std::string ok =
      R"({"__metadata__":null,"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"extra":{"x":[1,{"y":null}]}}})";
  const auto h = ParseSafetensorsHeader(ok, 2);
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->tensors.size(), 1u);
  EXPECT_EQ(h->tensors[0].shape, std::vector<uint64_t>{2});
  EXPECT_TRUE(h->metadata.empty());
  const auto m = ParseSafetensorsHeader(R"({"__metadata__":{"format":"pt","k":"v"}})", 0);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->metadata.at("format"), "pt");
  EXPECT_EQ(m->metadata.at("k"), "v");
}

INSTANTIATE_TEST_SUITE_P(All, SafetensorsBadHeader, ::testing::ValuesIn(kBadCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(SafetensorsTest, WriterRoundTripsThroughReader) {
  const std::vector<TensorSpec> specs = {{"w", base::Dtype::kBF16, {3, 5}},
                                         {"s", base::Dtype::kU8, {7}}};
  const std::string path = (dir_ / "w.safetensors").string();
  const base::Status written = WriteSafetensors(
      path, specs, {{"format", "pt"}}, [](size_t i, uint64_t off, std::span<uint8_t> out) {
        for (size_t k = 0; k < out.size(); ++k)
          out[k] = static_cast<uint8_t>(i * 100 + off + k + 1);
      });
  ASSERT_TRUE(written.ok()) << written.message();
  auto r = SafetensorsFile::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TensorInfo* s = (*r)->Find("s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->shape, std::vector<uint64_t>{7});
  EXPECT_EQ((*(*r)->ReadAll(*s))[0], 101);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(SafetensorsTest, ShardedIndexAndBindings) {
  auto fill = [](size_t, uint64_t, std::span<uint8_t> out) {
    std::fill(out.begin(), out.end(), 7);
  };
  ASSERT_TRUE(WriteSafetensors((dir_ / "s1.safetensors").string(), {{"t.a", base::Dtype::kU8, {4}}},
                               {}, fill)
                  .ok());
  ASSERT_TRUE(WriteSafetensors((dir_ / "s2.safetensors").string(),
                               {{"t.b", base::Dtype::kF32, {2, 2}}}, {}, fill)
                  .ok());
  std::ofstream(dir_ / "model.safetensors.index.json")
      << R"({"metadata":{"total_size":20},"weight_map":{"t.a":"s1.safetensors","t.b":"s2.safetensors"}})";
  auto c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)->files().size(), 2u);
  EXPECT_EQ((*c)->TotalBytes(), 20u);

  // The plan's buffers as a (hand-built) plan holds them: d binds t.a a second time, with
  // another shape, which the verifier would refuse (K6); the binding check judges each alone.
  simulator::LoadPlan plan;
  auto weight = [](uint32_t id, std::string name, std::string tensor, base::Dtype dtype,
                   std::vector<uint64_t> shape) {
    return simulator::PlannedBuffer{.id = simulator::BufferId{id},
                                    .name = name,
                                    .dtype = dtype,
                                    .shape = shape,
                                    .tensor = tensor};
  };
  plan.buffers = {weight(0, "a", "t.a", base::Dtype::kU8, {4}),
                  weight(1, "b", "t.b", base::Dtype::kBF16, {2, 2}),
                  weight(2, "c", "t.c", base::Dtype::kU8, {1}),
                  weight(3, "d", "t.a", base::Dtype::kU8, {2, 2})};
  const std::vector<std::string> errors = base::StatusLines(CheckBindings(plan, **c));
  ASSERT_EQ(errors.size(), 3u);  // b dtype, c missing, d shape: all at once
  EXPECT_NE(errors[0].find("dtype F32"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("not in the checkpoint"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("shape [4]"), std::string::npos) << errors[2];
}

// An index that does not say where the tensors are is refused, naming the tensor and shards.
TEST_F(SafetensorsTest, IndexMustMatchTheShards) {
  auto fill = [](size_t, uint64_t, std::span<uint8_t> out) {
    std::fill(out.begin(), out.end(), 7);
  };
  ASSERT_TRUE(WriteSafetensors((dir_ / "s1.safetensors").string(), {{"t.a", base::Dtype::kU8, {4}}},
                               {}, fill)
                  .ok());
  ASSERT_TRUE(WriteSafetensors((dir_ / "s2.safetensors").string(), {{"t.b", base::Dtype::kU8, {2}}},
                               {}, fill)
                  .ok());
  const struct {
    const char* weight_map;
    const char* expect;
  } cases[] = {
      {R"({"t.a":"s2.safetensors","t.b":"s1.safetensors"})", "lists 't.a' in"},  // swapped
      {R"({"t.a":"s1.safetensors","t.b":"s2.safetensors","t.c":"s2.safetensors"})",
       "'t.c'"},  // not held
      {R"({"t.a":"s1.safetensors","t.b":".."})", "not a file name"},
  };
  for (const auto& c : cases) {
    std::ofstream(dir_ / "model.safetensors.index.json")
        << R"({"weight_map":)" << c.weight_map << "}";
    const auto opened = Checkpoint::Open(dir_.string());
    EXPECT_FALSE(opened.ok()) << c.weight_map;
    EXPECT_NE(opened.status().message().find(c.expect), std::string::npos)
        << c.weight_map << ": " << opened.status().message();
  }
  // The index defines the checkpoint: a shard it does not name is not part of it.
  std::ofstream(dir_ / "model.safetensors.index.json")
      << R"({"weight_map":{"t.a":"s1.safetensors"}})";
  const auto only_s1 = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(only_s1.ok()) << only_s1.status().message();
  EXPECT_EQ((*only_s1)->Find("t.b").info, nullptr);
}

// A directory whose index path is too long to stat (ENAMETOOLONG): an error, not a throw
// (fs::exists without an error_code threw filesystem_error out of Open).
TEST_F(SafetensorsTest, UnstatableIndexPathIsAnError) {
  fs::path deep = dir_;
  while (deep.string().size() < 4080)
    deep /= std::string(std::min<size_t>(200, 4080 - deep.string().size()), 'd');
  std::error_code ec;
  fs::create_directories(deep, ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_TRUE(fs::is_directory(deep));
  base::Status opened;
  EXPECT_NO_THROW(opened = Checkpoint::Open(deep.string()).status());
  EXPECT_FALSE(opened.ok());
  EXPECT_EQ(opened.kind(), base::ErrorKind::kIo);
  EXPECT_NE(opened.message().find("model.safetensors.index.json"), std::string::npos)
      << opened.message();
}

// Files we write load with the reference package, and files it writes load with ours.
TEST_F(SafetensorsTest, InteroperatesWithReferencePythonPackage) {
  const fs::path python = fs::path(LOADPLAN_SOURCE_DIR) / ".venv/bin/python";
  if (!fs::exists(python) ||
      std::system((python.string() + " -c 'import safetensors, numpy' 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "no .venv with safetensors + numpy (scripts/setup creates it)";
  }
  const std::string ours = (dir_ / "ours.safetensors").string();
  ASSERT_TRUE(WriteSafetensors(ours,
                               {{"x", base::Dtype::kF32, {2, 3}}, {"y", base::Dtype::kU8, {5}}},
                               {{"k", "v"}},
                               [](size_t, uint64_t off, std::span<uint8_t> out) {
                                 for (size_t k = 0; k < out.size(); ++k)
                                   out[k] = static_cast<uint8_t>(off + k);
                               })
                  .ok());
  const std::string theirs = (dir_ / "theirs.safetensors").string();
  const std::string script =
      "import numpy as np, sys\n"
      "from safetensors.numpy import load_file, save_file\n"
      "t = load_file(sys.argv[1])\n"
      "assert t['x'].shape == (2, 3) and t['x'].dtype == np.float32, t['x']\n"
      "assert list(t['y']) == [0, 1, 2, 3, 4], t['y']  # offsets are per tensor\n"
      "save_file({'z': np.arange(12, dtype=np.int16).reshape(3, 4), 'e': np.zeros((0,), "
      "np.float64)}, sys.argv[2], metadata={'m': 'n'})\n";
  const fs::path py = dir_ / "interop.py";
  std::ofstream(py) << script;
  ASSERT_EQ(std::system((python.string() + " " + py.string() + " " + ours + " " + theirs).c_str()),
            0);
  auto r = SafetensorsFile::Open(theirs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TensorInfo* z = (*r)->Find("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->dtype, base::Dtype::kI16);
  EXPECT_EQ(z->shape, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ((*(*r)->ReadAll(*z))[2], 1);  // little-endian int16 value 1 at element 1
  EXPECT_EQ((*r)->metadata().at("m"), "n");
}

}  // namespace
}  // namespace loadplan::backend
