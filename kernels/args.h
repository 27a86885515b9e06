// Arguments and status of a derive-kernel call: named buffers (pointer + bytes) and
// named int64 scalars. The same type serves the CUDA launch (device pointers) and
// the CPU reference (host pointers). Plain C++: includers need no CUDA headers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "base/status.h"

namespace loadplan::kernels {

// The outcome of a launch or reference run (base::Status); an error says what and where
// ("mxfp4_fc1_weight: i_pad = 100 is not a multiple of 128").
using Status = base::Status;

// A buffer bound to a parameter: the start of the bound range and how many bytes
// of it the kernel may touch (the parameter's extent must fit in it).
struct BufferArg {
  void* data = nullptr;
  uint64_t bytes = 0;
};

struct KernelArgs {
  std::map<std::string, BufferArg, std::less<>> buffers;
  std::map<std::string, int64_t, std::less<>> scalars;
};

}  // namespace loadplan::kernels
