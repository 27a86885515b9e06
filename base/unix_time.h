// The system clock as seconds since the Unix epoch: stamps that line up across processes (a
// rank's load start, a command's start and end against a wall clock read outside it).
#pragma once

#include <chrono>

namespace loadplan::base {

inline double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace loadplan::base
