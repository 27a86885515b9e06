// Checking CUDA runtime calls: one macro records file, line, call text and the error's name;
// move-only RAII types for streams, events, device and pinned memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "backend/backend.h"

namespace loadplan::backend::cuda {

// Ok for cudaSuccess; otherwise "backend/cuda/x.cc:42: cudaMalloc(&p, n) failed:
// cudaErrorMemoryAllocation (out of memory)". Clears a non-sticky error (cudaGetLastError).
Status CudaStatus(cudaError_t code, const char* call, const char* file, int line);
// The destructors' variant: never throws, reports a failure on stderr and goes on.
void CudaWarn(cudaError_t code, const char* call, const char* file, int line) noexcept;

}  // namespace loadplan::backend::cuda

// A Status for one CUDA call.
#define LOADPLAN_CUDA_CHECK(call) \
  ::loadplan::backend::cuda::CudaStatus((call), #call, __FILE__, __LINE__)
// Returns the error Status from the enclosing function when the call fails.
#define LOADPLAN_CUDA_TRY(call)                                                                   \
  do {                                                                                            \
    if (::loadplan::backend::Status lp_cuda_st_ = LOADPLAN_CUDA_CHECK(call); !lp_cuda_st_.ok()) { \
      return lp_cuda_st_;                                                                         \
    }                                                                                             \
  } while (0)
// For destructors and cleanup that cannot report: logs to stderr.
#define LOADPLAN_CUDA_WARN(call) \
  ::loadplan::backend::cuda::CudaWarn((call), #call, __FILE__, __LINE__)

namespace loadplan::backend::cuda {

// A move-only owner of a CUDA handle; Traits::Destroy releases it (never throws).
template <typename T, typename Traits>
class Unique {
 public:
  Unique() = default;
  explicit Unique(T handle) : h_(handle) {}
  Unique(Unique&& o) noexcept : h_(std::exchange(o.h_, T{})) {}
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, T{});
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;
  ~Unique() { Reset(); }

  [[nodiscard]] T get() const { return h_; }
  explicit operator bool() const { return h_ != T{}; }
  void Reset() noexcept {
    if (h_ != T{}) Traits::Destroy(std::exchange(h_, T{}));
  }
  // Hands the handle over without destroying it.
  [[nodiscard]] T Release() noexcept { return std::exchange(h_, T{}); }

 private:
  T h_{};
};

struct StreamTraits {
  static void Destroy(cudaStream_t s) noexcept { LOADPLAN_CUDA_WARN(cudaStreamDestroy(s)); }
};
struct EventTraits {
  static void Destroy(cudaEvent_t e) noexcept { LOADPLAN_CUDA_WARN(cudaEventDestroy(e)); }
};
struct DeviceTraits {
  static void Destroy(void* p) noexcept { LOADPLAN_CUDA_WARN(cudaFree(p)); }
};
struct PinnedTraits {
  static void Destroy(void* p) noexcept { LOADPLAN_CUDA_WARN(cudaFreeHost(p)); }
};

using Stream = Unique<cudaStream_t, StreamTraits>;
using Event = Unique<cudaEvent_t, EventTraits>;

// A cudaMalloc'd (or cudaMallocHost'd) block with its size. Free() is the checked release
// for the normal path; the destructor is the unchecked one.
template <typename Traits>
class Memory {
 public:
  Memory() = default;
  Memory(void* p, uint64_t bytes) : ptr_(p), bytes_(bytes) {}
  [[nodiscard]] uint8_t* get() const { return static_cast<uint8_t*>(ptr_.get()); }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  [[nodiscard]] bool held() const { return held_ || static_cast<bool>(ptr_); }
  void MarkHeld() { held_ = true; }  // a 0-byte allocation is held with a null pointer
  Status Free();
  // Hands the block over without freeing it (the caller owns it from here).
  [[nodiscard]] void* Release() noexcept {
    held_ = false;
    bytes_ = 0;
    return ptr_.Release();
  }

 private:
  Unique<void*, Traits> ptr_;
  uint64_t bytes_ = 0;
  bool held_ = false;
};
using DeviceMemory = Memory<DeviceTraits>;
using PinnedMemory = Memory<PinnedTraits>;

// Non-blocking streams (no implicit ordering with the legacy default stream).
Status CreateStream(Stream& out);
// `timing`: false gives cudaEventDisableTiming (cheaper to record and wait on).
Status CreateEvent(Event& out, bool timing);
Status AllocateDevice(uint64_t bytes, DeviceMemory& out);
Status AllocatePinned(uint64_t bytes, PinnedMemory& out);

struct MemInfo {
  uint64_t free = 0;
  uint64_t total = 0;
};
Status GetMemInfo(MemInfo& out);

}  // namespace loadplan::backend::cuda
