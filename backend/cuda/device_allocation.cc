// DeviceAllocation: cudaFree on the allocation's own device.
#include "backend/cuda/device_allocation.h"

#include <cstdio>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "backend/cuda/cuda_check.h"

namespace loadplan::backend {

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& o) noexcept {
  if (this != &o) {
    if (base::Status st = Free(); !st.ok())
      std::fprintf(stderr, "loadplan: %s\n", st.message().c_str());
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = o.device_;
  }
  return *this;
}

DeviceAllocation::~DeviceAllocation() {
  if (base::Status st = Free(); !st.ok())
    std::fprintf(stderr, "loadplan: %s\n", st.message().c_str());
}

base::Status DeviceAllocation::CopyToHost(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > bytes_ || out.size() > bytes_ - offset) {
    return base::Status::Error(fmt::format(
        "copy of {} bytes at offset {} is outside the {} bytes held", out.size(), offset, bytes_));
  }
  if (out.empty()) return base::Status::Ok();
  int current = 0;
  LOADPLAN_CUDA_TRY(cudaGetDevice(&current));
  if (current != device_) LOADPLAN_CUDA_TRY(cudaSetDevice(device_));
  base::Status st = LOADPLAN_CUDA_CHECK(cudaMemcpy(
      out.data(), static_cast<const uint8_t*>(ptr_) + offset, out.size(), cudaMemcpyDeviceToHost));
  if (current != device_) {
    base::Status back = LOADPLAN_CUDA_CHECK(cudaSetDevice(current));
    if (st.ok()) st = back;
  }
  return st;
}

base::Status DeviceAllocation::Free() {
  if (ptr_ == nullptr) return base::Status::Ok();
  int current = 0;
  LOADPLAN_CUDA_TRY(cudaGetDevice(&current));  // still held: a later Free may succeed
  void* p = std::exchange(ptr_, nullptr);
  bytes_ = 0;
  if (current != device_) LOADPLAN_CUDA_TRY(cudaSetDevice(device_));
  base::Status st = LOADPLAN_CUDA_CHECK(cudaFree(p));
  if (current != device_) {
    base::Status back = LOADPLAN_CUDA_CHECK(cudaSetDevice(current));
    if (st.ok()) st = back;
  }
  return st;
}

}  // namespace loadplan::backend
