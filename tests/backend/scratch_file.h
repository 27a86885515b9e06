// A file of given bytes in the temporary folder, written (so in the page cache) and open
// read-only, removed with the object: the fixture the file-reading tests share (file_read_test,
// mapped_read_test, the slice-read probes' tests).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "backend/checkpoint/file_read.h"

namespace loadplan::test_support {

class ScratchFile {
 public:
  // Named `tag`, the process id and the running test's name; fd() is -1 when it cannot be
  // opened (the caller asserts it).
  ScratchFile(std::string_view tag, const std::vector<uint8_t>& bytes) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        (std::filesystem::temp_directory_path() / (std::string(tag) + std::to_string(::getpid()) +
                                                   "_" + (test != nullptr ? test->name() : "")))
            .string();
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  }
  ~ScratchFile() {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int fd() const { return fd_; }
  // The file as a read sees it, `size` bytes at open (what the caller says it is).
  [[nodiscard]] backend::FileRef Ref(uint64_t size) const { return {path_, fd_, size}; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace loadplan::test_support
