// The memory of a GPU as it is now (`loadplan plan --device-memory free`). Plain C++ header.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace loadplan::backend {

struct DeviceMemInfo {
  uint64_t free = 0, total = 0;  // cudaMemGetInfo, after this process's context is created
  std::string name;              // "NVIDIA H200"
};

// Creates the CUDA context on `device` (so `free` already nets out one context: ours, which
// exits with us, the size of the one the serving process will need). kDevice with the reason
// ("no CUDA device (cudaErrorInsufficientDriver)") on a machine without a usable GPU.
base::Result<DeviceMemInfo> QueryDeviceMemory(int device);

// Creates the CUDA context on `device` (cudaSetDevice, then the first call that needs it):
// the process's CUDA start, which `loadplan run` overlaps with parsing and planning on another
// thread. The seconds it took, or kDevice with the reason as QueryDeviceMemory gives it.
base::Result<double> StartDevice(int device);

}  // namespace loadplan::backend
