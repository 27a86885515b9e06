// FileMapping::Gather (backend/checkpoint/mapped_read.h): strided runs read through a mapping equal
// the file's bytes at every offset (page-aligned or not); a file that ended, an injected fault
// and a file cut short under the copy (SIGBUS) are kIo errors naming the file and the tensor,
// never a crash; a SIGBUS outside a guarded copy still reaches the handler before ours.
#include "backend/checkpoint/mapped_read.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/backend/scratch_file.h"

namespace loadplan::backend {
namespace {

// `file` mapped, the runs gathered out of the mapping, the mapping dropped.
base::Status GatherOnce(const FileRef& file, const MappedRuns& r, uint8_t* out,
                        const ReadContext& context) {
  const base::Result<std::unique_ptr<FileMapping>> m = FileMapping::Map(file);
  if (!m.ok()) return m.status();
  return (*m)->Gather(file, r, out, context);
}

class MappedReadTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kBytes = 3 * 4096 + 100;
  void SetUp() override {
    bytes_.resize(kBytes);
    for (uint64_t i = 0; i < kBytes; ++i) bytes_[i] = static_cast<uint8_t>(i * 7 + i / 251);
    file_.emplace("lp_mapped_", bytes_);
    path_ = file_->path();
    fd_ = file_->fd();
    ASSERT_GE(fd_, 0);
  }
  FileRef Ref() const { return file_->Ref(kBytes); }
  // The runs through a mapping of the whole file made for this gather.
  base::Status Gather(const MappedRuns& r, uint8_t* out, const ReadContext& context) const {
    return GatherOnce(Ref(), r, out, context);
  }
  // What the runs are, from the bytes written.
  std::vector<uint8_t> Expected(const MappedRuns& r) const {
    std::vector<uint8_t> out;
    for (uint64_t i = 0; i < r.count; ++i) {
      const auto at = bytes_.begin() + static_cast<std::ptrdiff_t>(r.offset + i * r.stride);
      out.insert(out.end(), at, at + static_cast<std::ptrdiff_t>(r.run_bytes));
    }
    return out;
  }
  std::optional<test_support::ScratchFile> file_;
  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> bytes_;
};

TEST_F(MappedReadTest, RunsAtAnyOffsetAndStrideAreTheFilesBytes) {
  for (const MappedRuns r :
       {MappedRuns{.offset = 0, .run_bytes = 8, .stride = 16, .count = 700},
        MappedRuns{.offset = 4093, .run_bytes = 5, .stride = 4096, .count = 3},
        MappedRuns{.offset = 1, .run_bytes = 1000, .stride = 1000, .count = 12},
        MappedRuns{.offset = 77, .run_bytes = 192, .stride = 1440, .count = 8},
        MappedRuns{.offset = kBytes - 3, .run_bytes = 3, .stride = 0, .count = 1}}) {
    std::vector<uint8_t> out(r.count * r.run_bytes);
    const base::Status st = Gather(r, out.data(), {.tensor = "t"});
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(out, Expected(r)) << r.offset << " " << r.run_bytes << " " << r.stride;
  }
}

// The same runs out of one mapping of the whole file, kept across gathers (FileMappings: one
// a descriptor); a cut file is "the file ended" there too.
TEST_F(MappedReadTest, OneMappingOfTheFileServesEveryGather) {
  FileMappings mappings;
  const base::Result<const FileMapping*> m = mappings.Of(Ref());
  ASSERT_TRUE(m.ok()) << m.status().message();
  const base::Result<const FileMapping*> again = mappings.Of(Ref());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *m);
  for (const MappedRuns r :
       {MappedRuns{.offset = 0, .run_bytes = 8, .stride = 16, .count = 700},
        MappedRuns{.offset = 4093, .run_bytes = 5, .stride = 4096, .count = 3},
        MappedRuns{.offset = 77, .run_bytes = 192, .stride = 1440, .count = 8}}) {
    std::vector<uint8_t> out(r.count * r.run_bytes);
    const base::Status st = (*m)->Gather(Ref(), r, out.data(), {.tensor = "t"});
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(out, Expected(r)) << r.offset;
  }
  const MappedRuns past{.offset = 4000, .run_bytes = 100, .stride = 4096, .count = 4};
  std::vector<uint8_t> out(400);
  EXPECT_NE((*m)->Gather(Ref(), past, out.data(), {.tensor = "w"})
                .message()
                .find("the file ended after 0 of 12388 bytes"),
            std::string::npos);
  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);  // cut under the mapping
  const MappedRuns r{.offset = 0, .run_bytes = 8, .stride = 4096, .count = 3};
  const base::Status st = (*m)->Gather(Ref(), r, out.data(), {.tensor = "w"});
  EXPECT_EQ(st.kind(), base::ErrorKind::kIo);
  EXPECT_NE(st.message().find("it is 4096 bytes now, was 12388 when opened"), std::string::npos)
      << st.message();
  IoFaultState eio({.eio_at_read = 0});
  EXPECT_EQ((*m)->Gather(Ref(), r, out.data(), {.faults = &eio}).file()->error_number, EIO);
}

TEST_F(MappedReadTest, RunsPastTheEndSayTheFileEnded) {
  const MappedRuns r{.offset = 4000, .run_bytes = 100, .stride = 4096, .count = 4};
  std::vector<uint8_t> out(r.count * r.run_bytes);
  const base::Status st = Gather(r, out.data(), {.tensor = "w", .tensor_offset = 7});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.kind(), base::ErrorKind::kIo);
  EXPECT_EQ(st.message(), path_ +
                              ": tensor w: byte offset 7 (file offset 4000): the file ended "
                              "after 0 of 12388 bytes: it is 12388 bytes now, was 12388 when "
                              "opened");
  EXPECT_EQ(st.place(), (base::ErrorPlace{.name = "w", .offset = 7}));
  EXPECT_EQ(st.file(), (base::ErrorFile{.path = path_, .error_number = 0}));
}

TEST_F(MappedReadTest, InjectedFaultsCountOneReadAGather) {
  const MappedRuns r{.offset = 0, .run_bytes = 8, .stride = 16, .count = 4};
  std::vector<uint8_t> out(32);
  IoFaultState eio({.eio_at_read = 1});
  ASSERT_TRUE(Gather(r, out.data(), {.tensor = "w", .faults = &eio}).ok());
  const base::Status st = Gather(r, out.data(), {.tensor = "w", .faults = &eio});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("tensor w: byte offset 0 (file offset 0): read failed: "),
            std::string::npos)
      << st.message();
  EXPECT_EQ(st.file()->error_number, EIO);
  IoFaultState eof({.eof_at_read = 0});
  EXPECT_NE(Gather(r, out.data(), {.faults = &eof}).message().find("the file ended"),
            std::string::npos);
}

// The file cut to one page after its pages are mapped: the copy's first access past it raises
// SIGBUS, which the guard turns into "the file ended" (kIo), the process alive.
TEST_F(MappedReadTest, AFileCutShortUnderTheCopyIsAnErrorNotACrash) {
  void* map = ::mmap(nullptr, kBytes, PROT_READ, MAP_SHARED, fd_, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);
  struct Arg {
    const uint8_t* from;
    uint64_t sum = 0;
  } arg{static_cast<const uint8_t*>(map)};
  const auto read_all = [](void* a) {
    Arg& x = *static_cast<Arg*>(a);
    for (uint64_t i = 0; i < kBytes; i += 64) x.sum += x.from[i];
  };
  EXPECT_FALSE(GuardedCopy(map, static_cast<const char*>(map) + kBytes, read_all, &arg));
  EXPECT_TRUE(GuardedCopy(
      map, static_cast<const char*>(map) + 4096, [](void* a) { static_cast<Arg*>(a)->sum += 1; },
      &arg));
  ::munmap(map, kBytes);
  // Through a gather the size check sees the cut first: the same error as a pread's.
  const MappedRuns r{.offset = 0, .run_bytes = 8, .stride = 4096, .count = 3};
  std::vector<uint8_t> out(24);
  const base::Status st = Gather(r, out.data(), {.tensor = "w"});
  EXPECT_NE(st.message().find("it is 4096 bytes now, was 12388 when opened"), std::string::npos)
      << st.message();
}

// A SIGBUS that is not a guarded copy's goes to the handler installed before ours: in a child
// (a death test), a handler that exits 42, ours installed over it by a gather, then an
// unguarded read past a cut file's end.
[[noreturn]] void SigbusOutsideTheGuard(const FileRef& file, const std::string& path) {
  struct sigaction a {};
  a.sa_handler = [](int) { ::_exit(42); };
  ::sigaction(SIGBUS, &a, nullptr);
  const MappedRuns r{.offset = 0, .run_bytes = 8, .stride = 16, .count = 4};
  std::vector<uint8_t> out(32);
  if (!GatherOnce(file, r, out.data(), {}).ok()) ::_exit(1);  // installs ours
  void* map = ::mmap(nullptr, file.size_at_open, PROT_READ, MAP_SHARED, file.fd, 0);
  if (map == MAP_FAILED || ::truncate(path.c_str(), 4096) != 0) ::_exit(2);
  const volatile uint8_t* p = static_cast<const uint8_t*>(map);
  (void)p[2 * 4096];  // unguarded: SIGBUS
  ::_exit(3);
}

TEST_F(MappedReadTest, ASigbusOutsideTheGuardReachesThePreviousHandler) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(SigbusOutsideTheGuard(Ref(), path_), ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace loadplan::backend
