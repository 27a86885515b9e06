// model.safetensors.index.json: the weight_map read strictly (one object, no key twice, every
// entry a shard file name), and the shards it names opened on several threads.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors_write.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

class Index : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("loadplan-index-{}-{}", ::getpid(), n_++);
    fs::create_directories(dir_);
    for (int s = 0; s < 3; ++s) {
      const std::vector<TensorSpec> t = {{fmt::format("t{}", s), base::Dtype::kU8, {4}}};
      ASSERT_TRUE(WriteSafetensors((dir_ / Shard(s)).string(), t, {},
                                   [](size_t, uint64_t, std::span<uint8_t> out) {
                                     std::fill(out.begin(), out.end(), uint8_t{1});
                                   })
                      .ok());
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string Shard(int s) { return fmt::format("model-{:05}-of-00003.safetensors", s + 1); }
  std::string Open(const std::string& index) {
    std::ofstream(dir_ / "model.safetensors.index.json") << index;
    const auto c = Checkpoint::Open(dir_.string());
    return c.ok() ? std::string("ok") : c.status().message();
  }
  std::string Good() const {
    return fmt::format(
        R"({{"metadata": {{"total_size": 12}}, "weight_map": {{"t0": "{}", "t1": "{}", "t2": "{}"}}}})",
        Shard(0), Shard(1), Shard(2));
  }

  fs::path dir_;
  static inline int n_ = 0;
};

TEST_F(Index, ShardedCheckpointOpens) {
  EXPECT_EQ(Open(Good()), "ok");
  const auto c = Checkpoint::Open(dir_.string());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->files().size(), 3u);
  EXPECT_NE((*c)->Find("t2").info, nullptr);
}

TEST_F(Index, StrictAboutItsJson) {
  EXPECT_NE(Open("[1, 2]").find("not a valid index JSON object: not a JSON object"),
            std::string::npos);
  EXPECT_NE(Open("{\"weight_map\": ").find("not a valid index JSON object: not JSON"),
            std::string::npos);
  EXPECT_NE(Open("{\"metadata\": {}}").find("no weight_map object"), std::string::npos);
  EXPECT_NE(Open("{\"weight_map\": [1]}").find("weight_map is not an object"), std::string::npos);
  EXPECT_NE(Open("{\"weight_map\": 3}").find("weight_map is a number, not an object"),
            std::string::npos);
  EXPECT_NE(Open(fmt::format(R"({{"weight_map": {{"t0": "{}", "t0": "{}"}}}})", Shard(0), Shard(1)))
                .find("weight_map lists 't0' twice"),
            std::string::npos);
  EXPECT_NE(Open(R"({"weight_map": {}, "weight_map": {}})").find("key 'weight_map' appears twice"),
            std::string::npos);
  EXPECT_NE(
      Open(R"({"weight_map": {"t0": 7}})").find("weight_map entry for 't0' is not a file name"),
      std::string::npos);
  EXPECT_NE(Open(R"({"weight_map": {"t0": "../x.safetensors"}})").find("is not a file name"),
            std::string::npos);
  EXPECT_NE(Open(R"({"a": [[[[[[[[[1]]]]]]]]], "weight_map": {}})").find("nested deeper than 8"),
            std::string::npos);
  EXPECT_NE(Open(std::string("{\"weight_map\": {}}\0", 19)).find("a NUL byte"), std::string::npos);
}

TEST_F(Index, TheMapMustSayWhereEachTensorIs) {
  // t1 is in shard 2, the map says shard 1.
  const std::string wrong = fmt::format(
      R"({{"weight_map": {{"t0": "{}", "t1": "{}", "t2": "{}"}}}})", Shard(0), Shard(0), Shard(2));
  EXPECT_NE(Open(wrong).find("weight_map lists 't1' in"), std::string::npos);
  fs::remove(dir_ / Shard(1));
  EXPECT_NE(Open(Good()).find(Shard(1)), std::string::npos);  // a shard missing
}

}  // namespace
}  // namespace loadplan::backend
