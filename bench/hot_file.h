// A scratch file in the page cache, for the benchmarks that time reads of it
// (bench_run_reads, bench_slice_reads).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace loadplan::bench {

// A file of `bytes` (whole MiB) named `prefix`-XXXXXX in `dir`, written with a non-constant
// pattern and read back once, so it is in the page cache; "" on failure. The caller unlinks it.
inline std::string HotFile(const std::string& dir, const std::string& prefix, uint64_t bytes) {
  std::string path = dir + "/" + prefix + "-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return "";
  std::vector<char> block(uint64_t{1} << 20);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131);
  for (uint64_t done = 0; done < bytes; done += block.size()) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
      ::close(fd);
      ::unlink(path.c_str());
      return "";
    }
  }
  for (off_t at = 0; ::pread(fd, block.data(), block.size(), at) > 0;
       at += static_cast<off_t>(block.size())) {}
  ::close(fd);
  return path;
}

}  // namespace loadplan::bench
