// AtomicFile: the target appears only at Commit, whole; a writer dropped before Commit (or
// moved from) leaves no temporary; faults at create, write and rename keep the old target.
#include "backend/save_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("lp_atomic_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    target_ = (dir_ / "out.bin").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t Entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  std::string Read() const {
    std::ifstream in(target_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static std::vector<uint8_t> Bytes(std::string_view s) { return {s.begin(), s.end()}; }
  fs::path dir_;
  std::string target_;
};

TEST_F(AtomicFileTest, TheTargetAppearsOnlyAtCommitWhole) {
  base::Result<AtomicFile> f = AtomicFile::Create(target_);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(fs::path(f->temp_path()).filename().string(),
            fmt::format(".out.bin.tmp-{}", ::getpid()));
  ASSERT_TRUE(f->Write(Bytes("hello ")).ok());
  ASSERT_TRUE(f->Write(Bytes("world")).ok());
  EXPECT_FALSE(fs::exists(target_));
  ASSERT_TRUE(f->Commit().ok());
  EXPECT_EQ(Read(), "hello world");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(AtomicFileTest, ADroppedOrMovedFromWriterLeavesNoTemporary) {
  {
    base::Result<AtomicFile> f = AtomicFile::Create(target_);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->Write(Bytes("partial")).ok());
    std::optional<AtomicFile> moved(std::move(*f));  // the moved-from one owns nothing
    EXPECT_EQ(Entries(), 1u);
  }
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(AtomicFileTest, FaultsKeepThePreviousTarget) {
  {
    base::Result<AtomicFile> f = AtomicFile::Create(target_);
    ASSERT_TRUE(f.ok() && f->Write(Bytes("old")).ok() && f->Commit().ok());
  }
  const WriteFaults faults[] = {{.fail_write = 2, .error = ENOSPC},
                                {.fail_write = 1, .error = EIO},
                                {.fail_create = EACCES},
                                {.fail_rename = EXDEV}};
  for (const WriteFaults& w : faults) {
    base::Result<AtomicFile> f = AtomicFile::Create(target_, w);
    base::Status st = f.status();
    if (f.ok()) st = f->Write(Bytes("new "));
    if (st.ok()) st = f->Write(Bytes("bytes"));
    if (st.ok()) st = f->Commit();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.kind(), base::ErrorKind::kIo) << st.message();
    EXPECT_EQ(Read(), "old") << st.message();
    EXPECT_EQ(Entries(), 1u) << st.message();
    if (f.ok()) {
      EXPECT_FALSE(f->Write(Bytes("more")).ok());  // nothing after a failure
    }
  }
}

}  // namespace
}  // namespace loadplan::backend
