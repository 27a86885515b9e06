// ReadExact and SafetensorsFile::Read: short reads and EINTR absorbed, the end of the file and
// failed reads reported with the file, tensor and byte offset; the fault seam's counting.
#include "backend/checkpoint/file_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/checkpoint/safetensors.h"
#include "backend/checkpoint/safetensors_write.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

class FileReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             ("lp_read_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    bytes_.resize(100);
    std::iota(bytes_.begin(), bytes_.end(), uint8_t{1});
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(100));
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    ::close(fd_);
    fs::remove(path_);
  }
  FileRef Ref() const { return {path_, fd_, 100}; }
  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> bytes_;
};

TEST_F(FileReadTest, ShortReadsAndEintrAreRetried) {
  IoFaultState faults({.short_at_read = 0, .eintr_every = true});
  std::vector<uint8_t> out(90);
  ASSERT_TRUE(ReadExact(Ref(), 10, out, {.tensor = "t", .faults = &faults}).ok());
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes_.begin() + 10));
  EXPECT_EQ(faults.reads(), 2u);  // half, then the rest; the EINTRs are not reads
}

TEST_F(FileReadTest, EndOfFileSaysWhereAndHowMuchArrived) {
  std::vector<uint8_t> out(200);
  const base::Status st = ReadExact(Ref(), 3, out, {.tensor = "w", .tensor_offset = 7});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), base::ErrorKind::kIo);
  EXPECT_EQ(st.message(), path_ +
                              ": tensor w: byte offset 104 (file offset 100): the file ended "
                              "after 97 of 200 bytes: it is 100 bytes now, was 100 when opened");
}

TEST_F(FileReadTest, InjectedEioNamesTheHeaderWithoutATensor) {
  IoFaultState faults({.eio_at_read = 1});
  std::vector<uint8_t> out(8);
  EXPECT_TRUE(ReadExact(Ref(), 0, out, {.faults = &faults}).ok());  // read 0 is fine
  const base::Status st = ReadExact(Ref(), 8, out, {.faults = &faults});
  EXPECT_EQ(st.message(),
            path_ + ": header: byte offset 0 (file offset 8): read failed: Input/output error");
}

TEST_F(FileReadTest, InjectedEofFromReadKOn) {
  IoFaultState faults({.eof_at_read = 0});
  std::vector<uint8_t> out(8);
  const base::Status st = ReadExact(Ref(), 0, out, {.tensor = "t", .faults = &faults});
  EXPECT_NE(st.message().find("the file ended after 0 of 8 bytes"), std::string::npos)
      << st.message();
}

TEST(SafetensorsRead, RangeOutsideTheTensorIsInternal) {
  const std::string path =
      (fs::temp_directory_path() / ("lp_read_range_" + std::to_string(::getpid()) + ".st"))
          .string();
  ASSERT_TRUE(WriteSafetensors(path, {{.name = "a", .dtype = base::Dtype::kU8, .shape = {4}}}, {},
                               [](size_t, uint64_t o, std::span<uint8_t> out) {
                                 for (size_t i = 0; i < out.size(); ++i)
                                   out[i] = static_cast<uint8_t>(o + i + 1);
                               })
                  .ok());
  auto f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  const TensorInfo& a = *(*f)->Find("a");
  std::vector<uint8_t> out(2);
  ASSERT_TRUE((*f)->Read(a, 2, out).ok());
  EXPECT_EQ(out, (std::vector<uint8_t>{3, 4}));
  EXPECT_EQ((*f)->Read(a, 3, out).kind(), base::ErrorKind::kInternal);
  EXPECT_TRUE((*f)->CheckUnchanged().ok());
  fs::remove(path);
  EXPECT_NE((*f)->CheckUnchanged().message().find("deleted since it was opened"),
            std::string::npos);
}

}  // namespace
}  // namespace loadplan::backend
