// QueryDeviceMemory: cudaMemGetInfo on one device, with the no-device reason when there is none.
#include "backend/cuda/free_memory.h"

#include <chrono>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "base/seconds.h"

namespace loadplan::backend {

base::Result<DeviceMemInfo> QueryDeviceMemory(int device) {
  if (base::Status usable = DeviceUsable(device); !usable.ok()) return usable;
  LOADPLAN_CUDA_TRY(cudaSetDevice(device));
  cudaDeviceProp prop{};
  LOADPLAN_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  cuda::MemInfo info{};
  if (base::Status s = cuda::GetMemInfo(info); !s.ok()) return s;
  return DeviceMemInfo{.free = info.free, .total = info.total, .name = prop.name};
}

base::Result<double> StartDevice(int device) {
  const auto t0 = std::chrono::steady_clock::now();
  if (base::Status usable = DeviceUsable(device); !usable.ok()) return usable;
  LOADPLAN_CUDA_TRY(cudaSetDevice(device));
  LOADPLAN_CUDA_TRY(cudaFree(nullptr));
  return base::SecondsSince(t0);
}

}  // namespace loadplan::backend
