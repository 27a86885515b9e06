// ProbeRunReads: a fixed cost per read above 0 and below a millisecond on a file in the page
// cache, its runs counted; a file too small for 16 runs and a descriptor that cannot read are
// errors that say so.
#include "backend/measure/run_read_probe.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/backend/scratch_file.h"

namespace loadplan::backend {
namespace {

// A file of `bytes` (written, so in the page cache), removed with the fixture.
class RunReadProbeTest : public ::testing::Test {
 protected:
  void Write(uint64_t bytes) {
    file_.emplace("loadplan-run-probe-", std::vector<uint8_t>(bytes, 'x'));
    fd_ = file_->fd();
    ASSERT_GE(fd_, 0);
  }
  std::optional<test_support::ScratchFile> file_;
  int fd_ = -1;
};

TEST_F(RunReadProbeTest, AReadCostsMoreThanNothingAndLessThanAMillisecond) {
  Write(uint64_t{16} << 20);  // 1024 runs 16 KiB apart
  const base::Result<RunReadCost> c = ProbeRunReads(fd_, uint64_t{16} << 20);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->runs, 1024u);
  EXPECT_GT(c->per_run_s, 0);
  EXPECT_LT(c->per_run_s, 1e-3);
  EXPECT_GE(c->per_byte_s, 0);
}

// Threads reading at once, as the I/O threads read a column split: each its own runs, the
// cost on each of them.
TEST_F(RunReadProbeTest, ThreadsAtOnceEachReadTheirShare) {
  Write(uint64_t{16} << 20);
  const base::Result<RunReadCost> c = ProbeRunReads(fd_, uint64_t{16} << 20, 65536, 3);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->threads, 3u);
  EXPECT_EQ(c->runs, 1023u);  // 1024 runs, 341 a thread
  EXPECT_GT(c->per_run_s, 0);
  EXPECT_LT(c->per_run_s, 1e-3);
  const base::Result<RunReadCost> many = ProbeRunReads(fd_, uint64_t{16} << 20, 65536, 100);
  ASSERT_FALSE(many.ok());  // 10 runs a thread
  EXPECT_NE(many.status().message().find("for each of 100 threads"), std::string::npos)
      << many.status().message();
}

TEST_F(RunReadProbeTest, TooSmallAFileOrAShortReadIsAnError) {
  Write(uint64_t{64} << 10);
  const base::Result<RunReadCost> small = ProbeRunReads(fd_, uint64_t{64} << 10);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("fewer than 16 runs"), std::string::npos)
      << small.status().message();
  // The caller says the file is larger than it is: the first read past its end comes short.
  const base::Result<RunReadCost> past = ProbeRunReads(fd_, uint64_t{1} << 30, 64);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().kind(), base::ErrorKind::kIo);
  EXPECT_NE(past.status().message().find("gave 0"), std::string::npos) << past.status().message();
}

}  // namespace
}  // namespace loadplan::backend
