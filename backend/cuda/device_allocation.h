// Device memory handed out of a backend: one cudaMalloc'd block with its size and device,
// freed (on that device) when the owner goes. Plain C++ header (no CUDA types), so programs
// that hold a loaded model need no CUDA headers.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "base/status.h"

namespace loadplan::backend {

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  // Takes ownership of `ptr` (cudaMalloc'd on `device`, `bytes` long; null when bytes is 0).
  DeviceAllocation(void* ptr, uint64_t bytes, int device)
      : ptr_(ptr), bytes_(bytes), device_(device) {}
  DeviceAllocation(DeviceAllocation&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        device_(o.device_) {}
  DeviceAllocation& operator=(DeviceAllocation&& o) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation();  // the unchecked release (a failure is logged to stderr)

  [[nodiscard]] void* get() const { return ptr_; }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }
  [[nodiscard]] int device() const { return device_; }
  // Copies [offset, offset + out.size()) to host memory (synchronous); an out-of-range copy
  // is an error, never a read past the block.
  [[nodiscard]] base::Status CopyToHost(uint64_t offset, std::span<uint8_t> out) const;
  // The checked release: frees now and says whether CUDA agreed. Idempotent.
  [[nodiscard]] base::Status Free();

 private:
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace loadplan::backend
