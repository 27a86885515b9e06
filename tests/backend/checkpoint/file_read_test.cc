// ReadExact and SafetensorsFile::Read: short reads and EINTR absorbed, the end of the file and
// failed reads reported with the file, tensor and byte offset; the fault seam's counting.
#include "backend/checkpoint/file_read.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/checkpoint/safetensors.h"
#include "backend/checkpoint/safetensors_write.h"
#include "tests/backend/scratch_file.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

class FileReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_.resize(100);
    std::iota(bytes_.begin(), bytes_.end(), uint8_t{1});
    file_.emplace("lp_read_", bytes_);
    path_ = file_->path();
    fd_ = file_->fd();
    ASSERT_GE(fd_, 0);
  }
  FileRef Ref() const { return file_->Ref(100); }
  std::optional<test_support::ScratchFile> file_;
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
  // The same figures as data: the tensor and the byte in it, the file (errno 0: it ended).
  EXPECT_EQ(st.place(), (base::ErrorPlace{.name = "w", .offset = 104}));
  EXPECT_EQ(st.file(), (base::ErrorFile{.path = path_, .error_number = 0}));
}

TEST_F(FileReadTest, InjectedEioNamesTheHeaderWithoutATensor) {
  IoFaultState faults({.eio_at_read = 1});
  std::vector<uint8_t> out(8);
  EXPECT_TRUE(ReadExact(Ref(), 0, out, {.faults = &faults}).ok());  // read 0 is fine
  const base::Status st = ReadExact(Ref(), 8, out, {.faults = &faults});
  EXPECT_EQ(st.message(),
            path_ + ": header: byte offset 0 (file offset 8): read failed: Input/output error");
  EXPECT_EQ(st.place(), (base::ErrorPlace{.name = "", .offset = 0}));
  EXPECT_EQ(st.file(), (base::ErrorFile{.path = path_, .error_number = EIO}));
  // Kept by the context a caller adds on the way up.
  EXPECT_EQ(st.WithContext("load").place(), st.place());
}

TEST_F(FileReadTest, InjectedEofFromReadKOn) {
  IoFaultState faults({.eof_at_read = 0});
  std::vector<uint8_t> out(8);
  const base::Status st = ReadExact(Ref(), 0, out, {.tensor = "t", .faults = &faults});
  EXPECT_NE(st.message().find("the file ended after 0 of 8 bytes"), std::string::npos)
      << st.message();
}

// Direct reads over a file of several blocks plus a tail (5 x 4096 + 123 bytes).
class DirectReadTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSize = 5 * kDirectAlign + 123;
  void SetUp() override {
    bytes_.resize(kSize);
    for (uint64_t i = 0; i < kSize; ++i) bytes_[i] = static_cast<uint8_t>(i * 7 + i / 251 + 1);
    file_.emplace("lp_direct_", bytes_);
    path_ = file_->path();
    fd_ = file_->fd();
    ASSERT_GE(fd_, 0);
    base::Result<DirectFile> d = DirectFile::Open(Ref());
    if (!d.ok()) GTEST_SKIP() << "no O_DIRECT here: " << d.status().message();
    direct_.emplace(std::move(*d));
    buffer_ = static_cast<uint8_t*>(std::aligned_alloc(kDirectAlign, DirectBufferBytes(kSize)));
  }
  void TearDown() override {
    std::free(buffer_);
    direct_.reset();
  }
  FileRef Ref() const { return file_->Ref(kSize); }
  std::span<uint8_t> Buffer(uint64_t n) const { return {buffer_, DirectBufferBytes(n)}; }
  // The bytes [offset, +n) through ReadDirect equal the file's.
  void ExpectRead(uint64_t offset, uint64_t n, IoFaultState* faults = nullptr) {
    SCOPED_TRACE(::testing::Message() << "offset " << offset << " n " << n);
    std::memset(buffer_, 0xA5, DirectBufferBytes(n));
    const base::Result<uint64_t> at =
        ReadDirect(Ref(), *direct_, offset, n, Buffer(n), {.tensor = "t", .faults = faults});
    ASSERT_TRUE(at.ok()) << at.status().message();
    EXPECT_EQ(*at, offset % kDirectAlign);
    EXPECT_TRUE(std::equal(buffer_ + *at, buffer_ + *at + n, bytes_.begin() + offset));
  }
  std::optional<test_support::ScratchFile> file_;
  std::string path_;
  int fd_ = -1;
  std::optional<DirectFile> direct_;
  uint8_t* buffer_ = nullptr;
  std::vector<uint8_t> bytes_;
};

TEST_F(DirectReadTest, AnyOffsetAndLengthGivesTheFilesBytes) {
  for (const uint64_t offset : {uint64_t{0}, uint64_t{1}, kDirectAlign - 1, kDirectAlign,
                                kDirectAlign + 17, 3 * kDirectAlign, kSize - 1}) {
    for (const uint64_t n : {uint64_t{1}, uint64_t{100}, kDirectAlign, 2 * kDirectAlign + 5}) {
      if (offset + n <= kSize) ExpectRead(offset, n);
    }
  }
  ExpectRead(0, kSize);  // the whole file: its tail block is short (the end of the file)
  ExpectRead(7, kSize - 7);
}

TEST_F(DirectReadTest, ShortReadsOffTheGridAndEintrStillGiveTheBytes) {
  IoFaultState faults({.short_at_read = 0, .eintr_every = true});
  ExpectRead(10, 3 * kDirectAlign, &faults);  // half of 4 blocks: off the grid, then buffered
  EXPECT_EQ(faults.reads(), 2u);
  IoFaultState later({.short_at_read = 1});
  ExpectRead(kDirectAlign + 3, kDirectAlign, &later);  // read 0 whole, none short
  ExpectRead(5, 2 * kDirectAlign, &later);             // read 1 short
}

TEST_F(DirectReadTest, EioNamesTheFileTensorAndOffset) {
  IoFaultState faults({.eio_at_read = 0});
  const base::Result<uint64_t> at =
      ReadDirect(Ref(), *direct_, kDirectAlign + 9, 100, Buffer(100),
                 {.tensor = "w", .tensor_offset = 64, .faults = &faults});
  ASSERT_FALSE(at.ok());
  EXPECT_EQ(at.status().kind(), base::ErrorKind::kIo);
  EXPECT_EQ(at.status().message(), path_ +
                                       ": tensor w: byte offset 64 (file offset 4105): direct read "
                                       "failed: Input/output error");
}

TEST_F(DirectReadTest, ATruncatedFileSaysItEnded) {
  ASSERT_EQ(::truncate(path_.c_str(), 2 * kDirectAlign + 10), 0);
  const base::Result<uint64_t> at = ReadDirect(Ref(), *direct_, kDirectAlign, 3 * kDirectAlign,
                                               Buffer(3 * kDirectAlign), {.tensor = "w"});
  ASSERT_FALSE(at.ok());
  // The short direct read (the file's end, off the grid) hands the rest to ReadExact, which
  // finds the end at once: the message names the exact byte where the file ended.
  EXPECT_EQ(at.status().message(), path_ +
                                       ": tensor w: byte offset 4106 (file offset 8202): the file "
                                       "ended after 0 of 8182 bytes: it is 8202 bytes now, was "
                                       "20603 when opened");
}

TEST_F(DirectReadTest, TheDescriptorIsTheOpenedInodeNotThePath) {
  // Replace the path by another file: the direct descriptor still reads the opened one.
  const std::string other = path_ + ".new";
  std::ofstream(other, std::ios::binary) << std::string(kSize, 'x');
  ASSERT_EQ(::rename(other.c_str(), path_.c_str()), 0);
  base::Result<DirectFile> again = DirectFile::Open(Ref());
  ASSERT_TRUE(again.ok()) << again.status().message();
  direct_.emplace(std::move(*again));
  ExpectRead(0, 200);
}

TEST_F(DirectReadTest, AnUnalignedOrSmallBufferIsInternal) {
  const base::Result<uint64_t> at =
      ReadDirect(Ref(), *direct_, 0, 100, {buffer_ + 1, DirectBufferBytes(100)}, {});
  ASSERT_FALSE(at.ok());
  EXPECT_EQ(at.status().kind(), base::ErrorKind::kInternal);
  EXPECT_FALSE(ReadDirect(Ref(), *direct_, 0, 100, {buffer_, 100}, {}).ok());
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
