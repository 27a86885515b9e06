// A one-line progress bar on stderr (only when stderr is a terminal or forced).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace loadplan::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  // Redraws at most ~10 times a second; the final call (done == total) ends the line.
  void Update(uint64_t done, uint64_t total);

 private:
  std::string label_;
  bool tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace loadplan::cli
