// The CUDA backend: creation, device memory (allocation, OOM, fault injection), measurements.
#include "backend/cuda/cuda_backend.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "backend/cuda/cuda_backend_impl.h"
#include "backend/preflight.h"
#include "base/bytes.h"
#include "simulator/plan_totals.h"

namespace loadplan::backend {

CudaBackend::Impl::~Impl() {
  io.reset();  // joins the I/O threads before anything they use goes away
  if (compute) LOADPLAN_CUDA_WARN(cudaStreamSynchronize(compute.get()));
}

Status CudaBackend::Impl::Init() {
  if (options.io_threads == 0 || options.chunk_bytes == 0) {
    return Status::Error("io_threads and chunk_bytes must be positive");
  }
  LOADPLAN_CUDA_TRY(cudaSetDevice(options.device));
  LOADPLAN_CUDA_TRY(cudaFree(nullptr));  // creates the context (and loads modules when EAGER)
  if (Status st = cuda::CreateStream(compute); !st.ok()) return st;
  if (Status st = cuda::IoPool::Create(options.io_threads, options.chunk_bytes, options.device,
                                       steps, io, options.direct_io, options.read_bytes);
      !st.ok()) {
    return st;
  }
  fill_total = simulator::FillBytes(plan);
  LOADPLAN_CUDA_TRY(cudaDeviceSynchronize());
  return cuda::GetMemInfo(baseline);
}

Status CudaBackend::Impl::Fault(const StepContext& at) const {
  if (options.stop.stop_requested()) return Cancelled();
  if (options.fail_at_step && *options.fail_at_step == simulator::Index(at.index)) {
    return Status::Error(fmt::format("injected fault at step {}", simulator::Index(at.index)));
  }
  return Status::Ok();
}

Status CudaBackend::Impl::OutOfMemory(const char* what, uint64_t bytes,
                                      const std::string& reason) const {
  cuda::MemInfo now;
  std::string free = "device free memory unknown";
  std::optional<uint64_t> free_bytes;
  if (cuda::GetMemInfo(now).ok()) {
    free = fmt::format("{} free of {}", base::FormatGiB(now.free), base::FormatGiB(now.total));
    free_bytes = now.free;
  }
  return Status::Error(
             fmt::format("{} of {} failed: {}; {} live on this backend; {}", what,
                         base::FormatGiBExact(bytes), reason, base::FormatGiBExact(live), free),
             base::ErrorKind::kOutOfMemory)
      .WithBytes(bytes, free_bytes);
}

Status CudaBackend::Impl::Allocate(const char* what, uint64_t bytes, cuda::DeviceMemory& out) {
  const uint32_t k = allocations++;
  if (out.held()) return Status::Error(fmt::format("{}: already allocated", what));
  if (options.fail_at_allocation && *options.fail_at_allocation == k) {
    return OutOfMemory(what, bytes, fmt::format("injected fault at allocation {}", k));
  }
  if (options.memory_limit &&
      (bytes > *options.memory_limit || live > *options.memory_limit - bytes)) {
    return OutOfMemory(
        what, bytes,
        fmt::format("over the memory limit of {}", base::FormatGiBExact(*options.memory_limit)));
  }
  if (Status st = cuda::AllocateDevice(bytes, out); !st.ok())
    return OutOfMemory(what, bytes, st.message());
  live += bytes;
  peak = std::max(peak, live);
  return SampleDelta();
}

Status CudaBackend::Impl::SampleDelta() {
  cuda::MemInfo now;
  if (Status st = cuda::GetMemInfo(now); !st.ok()) return st;
  if (baseline.free > now.free) peak_delta = std::max(peak_delta, baseline.free - now.free);
  return Status::Ok();
}

Status CudaBackend::Impl::Free(cuda::DeviceMemory& memory) {
  if (!memory.held()) return Status::Ok();
  const uint64_t bytes = memory.bytes();
  Status st = memory.Free();
  live -= std::min(live, bytes);
  return st;
}

std::optional<int> CudaBackend::Impl::FdOf(const SafetensorsFile* file) const {
  for (const SafetensorsFile& f : checkpoint.files()) {
    if (&f == file) return f.fd();
  }
  return std::nullopt;
}

void CudaBackend::Impl::Progress() const {
  if (options.progress && io) options.progress(io->BytesEnqueued(), fill_total);
}

void CudaBackend::Impl::Tick() {
  Progress();
  if (!cancelled && options.stop.stop_requested() && io) {
    cancelled = true;
    io->Cancel();
  }
}

Status CudaBackend::Impl::Cancelled() const {
  return Status::Error("the load was cancelled", base::ErrorKind::kCancelled);
}

CudaBackend::CudaBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaBackend::~CudaBackend() = default;

CudaBackend::CreateResult CudaBackend::Create(const simulator::LoadPlan& plan,
                                              const Checkpoint& checkpoint, CudaOptions options) {
  if (Status problems = Preflight(plan, checkpoint); !problems.ok()) return problems;
  auto impl = std::make_unique<Impl>(plan, checkpoint, std::move(options));
  if (Status st = impl->Init(); !st.ok()) return st;
  return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(impl)));
}

base::Result<DeviceAllocation> CudaBackend::TakeResident() {
  Impl& d = *impl_;
  if (!d.pool.held()) return Status::Error("TakeResident: the backend holds no resident pool");
  const uint64_t bytes = d.pool.bytes();
  DeviceAllocation out(d.pool.Release(), bytes, d.options.device);
  d.live -= std::min(d.live, bytes);
  return out;
}

uint64_t CudaBackend::LiveBytes() const { return impl_->live; }
uint64_t CudaBackend::PeakBytes() const { return impl_->peak; }

CudaMemory CudaBackend::Memory() const {
  return {.peak_allocated = impl_->peak,
          .peak_used_delta = impl_->peak_delta,
          .baseline_free = impl_->baseline.free,
          .total = impl_->baseline.total};
}

CudaTimes CudaBackend::Times() const {
  const cuda::IoStats io = impl_->io->Stats();
  const double threads = impl_->options.io_threads;
  return {.read_s = io.read_s / threads,
          .copy_s = io.copy_s / threads,
          .slot_wait_s = io.slot_wait_s / threads,
          .derive_s = impl_->derive_s,
          .wall_s = impl_->wall_s,
          .job_wait_s = io.job_wait_s / threads,
          .submit_s = impl_->submit_s,
          .start_s = io.start_s / threads,
          .end_s = io.end_s / threads,
          .enqueue_s = io.enqueue_s / threads,
          .started_unix_s = impl_->first_fill_unix_s,
          .bytes_filled = io.bytes,
          .file_bytes = io.file_bytes,
          .chunks = io.chunks,
          .reads = io.reads,
          .slices_as_runs = impl_->slices_as_runs,
          .slices_as_span = impl_->slices_as_span,
          .slices_as_map = impl_->slices_as_map,
          .launches = static_cast<uint32_t>(impl_->launch_events.size())};
}

Status DeviceUsable(int device) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::Error(fmt::format("no CUDA device ({})", cudaGetErrorName(e)),
                         base::ErrorKind::kDevice);
  }
  if (n == 0) return Status::Error("no CUDA device", base::ErrorKind::kDevice);
  if (device < 0 || device >= n) {
    return Status::Error(fmt::format("no CUDA device {} ({} present)", device, n),
                         base::ErrorKind::kDevice);
  }
  return Status::Ok();
}

void PrepareCudaProcess() { ::setenv("CUDA_MODULE_LOADING", "EAGER", 0); }

}  // namespace loadplan::backend
