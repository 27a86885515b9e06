// CUDA call checking and the RAII helpers' creation functions.
#include "backend/cuda/cuda_check.h"

#include <cstdio>
#include <type_traits>

#include <fmt/format.h>

namespace loadplan::backend::cuda {

Status CudaStatus(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return Status::Ok();
  (void)cudaGetLastError();  // clears the error unless it is sticky
  return Status::Error(fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                                   cudaGetErrorName(code), cudaGetErrorString(code)));
}

void CudaWarn(cudaError_t code, const char* call, const char* file, int line) noexcept {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();
  std::fprintf(stderr, "warning: %s:%d: %s failed: %s (%s)\n", file, line, call,
               cudaGetErrorName(code), cudaGetErrorString(code));
}

template <typename Traits>
Status Memory<Traits>::Free() {
  held_ = false;
  void* p = ptr_.Release();
  bytes_ = 0;
  if (p == nullptr) return Status::Ok();
  if constexpr (std::is_same_v<Traits, DeviceTraits>) {
    return LOADPLAN_CUDA_CHECK(cudaFree(p));
  } else {
    return LOADPLAN_CUDA_CHECK(cudaFreeHost(p));
  }
}
template class Memory<DeviceTraits>;
template class Memory<PinnedTraits>;

Status CreateStream(Stream& out) {
  cudaStream_t s = nullptr;
  LOADPLAN_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  out = Stream(s);
  return Status::Ok();
}

Status CreateEvent(Event& out, bool timing) {
  cudaEvent_t e = nullptr;
  LOADPLAN_CUDA_TRY(
      cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  out = Event(e);
  return Status::Ok();
}

Status AllocateDevice(uint64_t bytes, DeviceMemory& out) {
  void* p = nullptr;
  if (bytes > 0) LOADPLAN_CUDA_TRY(cudaMalloc(&p, bytes));
  out = DeviceMemory(p, bytes);
  out.MarkHeld();
  return Status::Ok();
}

Status AllocatePinned(uint64_t bytes, PinnedMemory& out) {
  void* p = nullptr;
  if (bytes > 0) LOADPLAN_CUDA_TRY(cudaMallocHost(&p, bytes));
  out = PinnedMemory(p, bytes);
  out.MarkHeld();
  return Status::Ok();
}

Status GetMemInfo(MemInfo& out) {
  size_t free = 0, total = 0;
  LOADPLAN_CUDA_TRY(cudaMemGetInfo(&free, &total));
  out = {.free = free, .total = total};
  return Status::Ok();
}

}  // namespace loadplan::backend::cuda
