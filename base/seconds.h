// Seconds on the steady clock since a moment taken from it: the one spelling of a measured
// duration (a read, a wait, a probe), where a local helper each was written before.
#pragma once

#include <chrono>

namespace loadplan::base {

inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Adds the seconds its scope lasted to `total` when the scope ends, however it ends.
class ScopedSeconds {
 public:
  explicit ScopedSeconds(double& total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
  ~ScopedSeconds() { total_ += SecondsSince(t0_); }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace loadplan::base
