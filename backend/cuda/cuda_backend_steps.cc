// The CUDA backend's plan steps: allocations, fills (handed to the I/O pool), launches on
// the compute stream, releases, frees; wait edges followed with the steps' CUDA events.
#include <chrono>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "backend/call_args.h"
#include "backend/checkpoint/bindings.h"
#include "backend/cuda/cuda_backend_impl.h"
#include "base/seconds.h"
#include "base/unix_time.h"
#include "kernels/launch.h"

namespace loadplan::backend {
namespace {

// The first failure of `all`, with the messages of the later ones appended: a cleanup that
// fails several ways reports every way.
Status FirstWithRest(std::initializer_list<Status> all) {
  Status first;
  std::string rest;
  for (const Status& s : all) {
    if (s.ok()) continue;
    if (first.ok()) {
      first = s;
    } else {
      rest += "; " + s.message();
    }
  }
  return rest.empty() ? first : first.WithMessage(first.message() + rest);
}

}  // namespace

using simulator::PlannedBuffer;
using simulator::Residence;

cuda::DeviceMemory* CudaBackend::Impl::RegionOf(const PlannedBuffer& b) {
  if (b.residence == Residence::kResident) return &pool;
  if (b.residence == Residence::kStaged) return &arena;
  return nullptr;
}

uint8_t* CudaBackend::Impl::Address(simulator::BufferId buffer) {
  if (simulator::Index(buffer) >= plan.buffers.size()) return nullptr;
  const PlannedBuffer& b = plan.buffer(buffer);
  cuda::DeviceMemory* region = RegionOf(b);
  if (region == nullptr || !region->held() || b.offset > region->bytes()) return nullptr;
  return region->get() + b.offset;
}

// Every buffer a call binds lies inside its held pool or arena, and the call's range inside it.
Status CudaBackend::Impl::CheckUses(const simulator::PlannedCall& call) {
  for (const simulator::PlannedArg& a : call.args) {
    const PlannedBuffer& b = plan.buffer(a.buffer);
    if (!a.bytes || *a.bytes > b.bytes) {
      return Status::Error(
          fmt::format("{}: param {} touches {} bytes of buffer {}, which has {}", call.ptr, a.param,
                      a.bytes ? fmt::format("{}", *a.bytes) : "unknown", b.name, b.bytes));
    }
    cuda::DeviceMemory* region = RegionOf(b);
    if (region == nullptr || !region->held()) {
      return Status::Error(fmt::format("{}: buffer {} is in neither a held pool nor a held arena",
                                       call.ptr, b.name));
    }
    if (b.offset > region->bytes() || b.bytes > region->bytes() - b.offset) {
      return Status::Error(
          fmt::format("{}: buffer {} [{}, +{}) is outside its allocation of {} bytes", call.ptr,
                      b.name, b.offset, b.bytes, region->bytes()));
    }
  }
  return Status::Ok();
}

Status CudaBackend::AllocateResident(uint64_t bytes, const StepContext& at) {
  if (Status f = impl_->Fault(at); !f.ok()) return f;
  Status st = impl_->Allocate("AllocateResident", bytes, impl_->pool);
  if (st.ok()) impl_->steps.Publish(at.index, {});
  return st;
}

Status CudaBackend::AllocateArena(uint64_t bytes, const StepContext& at) {
  if (Status f = impl_->Fault(at); !f.ok()) return f;
  Status st = impl_->Allocate("AllocateArena", bytes, impl_->arena);
  if (st.ok()) impl_->steps.Publish(at.index, {});
  return st;
}

// auto weighs a slice the plan can weigh (its manifest gives the tensor's extent: the runs are
// the plan's, preflight checked) the way the plan does; one it cannot is read by runs, as the
// plan predicts it.
simulator::timing::SliceRead CudaBackend::Impl::ReadOf(const PlannedBuffer& buffer,
                                                       const base::SliceRuns& runs) {
  using simulator::timing::SliceRead;
  SliceRead r = options.slice_read;
  if (r == SliceRead::kAuto && !(buffer.slice && buffer.slice->extent)) {
    r = SliceRead::kRuns;
  } else if (r == SliceRead::kAuto) {
    simulator::timing::SliceReadCosts costs = options.slice_costs;
    costs.threads = options.io_threads;
    if (options.direct_io) costs.per_page_s = 0;  // an O_DIRECT load maps nothing
    r = simulator::timing::ChooseSliceRead(runs, costs);
  }
  if (r == SliceRead::kMap && options.direct_io) r = SliceRead::kSpan;  // map reads the cache
  ++(r == SliceRead::kSpan  ? slices_as_span
     : r == SliceRead::kMap ? slices_as_map
                            : slices_as_runs);
  return r;
}

base::Result<std::vector<cuda::FillRequest>> CudaBackend::Impl::FillRequests(
    const PlannedBuffer& buffer, const std::vector<FillPart>& parts, const StepContext& at,
    uint8_t* dst) {
  std::vector<cuda::FillRequest> out;
  out.reserve(parts.size());
  uint64_t offset = 0;
  for (const FillPart& part : parts) {
    const Checkpoint::Located& loc = part.at;
    if (!FdOf(loc.file)) {
      return Status::Error(
          fmt::format("{}: {} is not a file of this checkpoint", buffer.name, loc.file->path()),
          base::ErrorKind::kInternal);
    }
    const base::SliceRuns& runs = part.runs;
    const cuda::FillRequest first{
        .step = at.index,
        .waits = {at.waits.begin(), at.waits.end()},
        .file = loc.file->Ref(),
        .tensor = loc.info->name,
        .file_offset = loc.file->FileOffset(*loc.info) + runs.first,
        .tensor_offset = runs.first,
        .faults = &faults,
        .dst = dst + offset,
        .bytes = runs.bytes(),
        .what = fmt::format("{} (tensor {} in {})", buffer.name, loc.info->name, loc.file->path())};
    offset += runs.bytes();  // LocateFill: the parts' runs sum to the buffer's bytes
    if (runs.count <= 1) {
      out.push_back(first);
    } else {
      AddStrided(buffer, runs, first, out);
    }
  }
  return out;
}

// A strided slice's requests: one request whose chunks hold whole runs (read as runs, span or
// map, as ReadOf says), or for runs of a chunk or more (or O_DIRECT runs) a request per run.
void CudaBackend::Impl::AddStrided(const PlannedBuffer& buffer, const base::SliceRuns& runs,
                                   const cuda::FillRequest& first,
                                   std::vector<cuda::FillRequest>& out) {
  const simulator::timing::SliceRead read = ReadOf(buffer, runs);
  const bool span = read == simulator::timing::SliceRead::kSpan;
  if (runs.run_bytes < options.chunk_bytes && (span || !options.direct_io)) {
    cuda::FillRequest r = first;
    r.run_bytes = runs.run_bytes;
    r.stride = runs.stride;
    r.span = span;
    r.map = read == simulator::timing::SliceRead::kMap;
    out.push_back(std::move(r));
    return;
  }
  for (uint64_t k = 0; k < runs.count; ++k) {
    cuda::FillRequest r = first;
    r.file_offset += k * runs.stride;
    r.tensor_offset += k * runs.stride;
    r.dst += k * runs.run_bytes;
    r.bytes = runs.run_bytes;
    out.push_back(std::move(r));
  }
}

Status CudaBackend::Fill(const PlannedBuffer& buffer, simulator::Lane /*lane*/,
                         const StepContext& at) {
  Impl& d = *impl_;
  // The load's clock starts as the first fill is entered, so every fill's submit time lies
  // inside wall_s.
  if (!d.first_fill) {
    d.first_fill = Impl::Clock::now();
    d.first_fill_unix_s = base::UnixSeconds();
  }
  const base::ScopedSeconds timed(d.submit_s);
  if (Status f = d.Fault(at); !f.ok()) return f;
  if (Status e = d.io->error(); !e.ok()) return d.ReportIo(std::move(e));
  const base::Result<std::vector<FillPart>> parts = LocateFill(buffer, d.checkpoint);
  if (!parts.ok())
    return Status::Error(fmt::format("{}: {}", buffer.name, parts.status().message()));
  cuda::DeviceMemory* region = d.RegionOf(buffer);
  if (region == nullptr || !region->held()) {
    return Status::Error(fmt::format("{}: its pool or arena is not allocated", buffer.name));
  }
  if (buffer.offset > region->bytes() || buffer.bytes > region->bytes() - buffer.offset) {
    return Status::Error(fmt::format("{}: [{}, +{}) is outside its allocation of {} bytes",
                                     buffer.name, buffer.offset, buffer.bytes, region->bytes()));
  }
  base::Result<std::vector<cuda::FillRequest>> requests =
      d.FillRequests(buffer, *parts, at, region->get() + buffer.offset);
  if (!requests.ok()) return requests.status();
  // Before the first read: every file is still the one Checkpoint::Open validated (its fds
  // are the ones read, never the paths again).
  if (!d.files_checked) {
    if (Status changed = d.checkpoint.CheckUnchanged(); !changed.ok()) return changed;
    d.files_checked = true;
  }
  Status st = d.io->SubmitParts(std::move(*requests));
  d.Progress();
  return st;
}

Status CudaBackend::Launch(const simulator::PlannedCall& call, const StepContext& at) {
  Impl& d = *impl_;
  if (Status f = d.Fault(at); !f.ok()) return f;
  std::vector<cudaEvent_t> events;
  d.steps.Collect(at.waits, events);  // blocks until the fills it reads are enqueued
  if (Status e = d.io->error(); !e.ok()) return d.ReportIo(std::move(e));
  cudaStream_t stream = d.compute.get();
  for (cudaEvent_t e : events) LOADPLAN_CUDA_TRY(cudaStreamWaitEvent(stream, e, 0));
  cuda::Event start, end;
  if (Status st = cuda::CreateEvent(start, true); !st.ok()) return st;
  if (Status st = cuda::CreateEvent(end, true); !st.ok()) return st;
  LOADPLAN_CUDA_TRY(cudaEventRecord(start.get(), stream));
  if (d.options.derive) {
    if (Status st = d.CheckUses(call); !st.ok()) return st;
    const base::Result<kernels::KernelArgs> bound =
        BindCall(d.plan, call, [&d](simulator::BufferId i) { return d.Address(i); });
    if (!bound.ok()) return bound.status();
    const kernels::Status ks = kernels::LaunchDerive(call.kernel, *bound, stream);
    if (!ks.ok()) return ks.WithContext(call.ptr);  // its kind: a refused call, or the device
  }
  LOADPLAN_CUDA_TRY(cudaEventRecord(end.get(), stream));
  d.steps.Publish(at.index, {end.get()});
  d.launch_events.emplace_back(std::move(start), std::move(end));
  d.Progress();
  return Status::Ok();
}

Status CudaBackend::Release(const PlannedBuffer& /*buffer*/, const StepContext& at) {
  if (Status f = impl_->Fault(at); !f.ok()) return f;
  // Nothing to free: later fills of these bytes wait for the last reader themselves.
  std::vector<cudaEvent_t> events;
  impl_->steps.Collect(at.waits, events);
  impl_->steps.Publish(at.index, std::move(events));
  return Status::Ok();
}

Status CudaBackend::FreeArena(const StepContext& at) {
  Impl& d = *impl_;
  if (Status f = d.Fault(at); !f.ok()) return f;
  std::vector<cudaEvent_t> events;
  d.steps.Collect(at.waits, events);
  // No copy may still target the arena: drain the pool (what is queued is at most the
  // weights of the last calls), then the compute stream.
  Status st = d.io->Drain([&d] { d.Tick(); });
  Status sync = LOADPLAN_CUDA_CHECK(cudaStreamSynchronize(d.compute.get()));
  if (sync.ok())
    sync = d.SampleDelta();  // the widest moment: pool, arena and whatever launches added
  Status freed = d.Free(d.arena);
  d.steps.Publish(at.index, {});
  if (!freed.ok()) return freed;
  if (d.cancelled) return d.Cancelled();
  // A fill error that a step already reported is not reported again by the cleanup.
  if (!st.ok() && !d.io_error_reported) return d.ReportIo(std::move(st));
  return sync;
}

Status CudaBackend::FreeResident() {
  Impl& d = *impl_;
  d.io->Cancel();
  Status st = d.io->Drain();
  Status sync = LOADPLAN_CUDA_CHECK(cudaStreamSynchronize(d.compute.get()));
  Status freed = d.Free(d.pool);
  // A fill error that a step (or Finish) already reported is not reported again; anything
  // else the drain found (the pool's own cleanup, a fill error no step saw) is.
  if (d.io_error_reported && st == d.io->error()) st = Status::Ok();
  return FirstWithRest({freed, sync, st});
}

Status CudaBackend::Finish() {
  Impl& d = *impl_;
  Status st = d.io->Drain([&d] { d.Tick(); });
  Status sync = LOADPLAN_CUDA_CHECK(cudaStreamSynchronize(d.compute.get()));
  if (sync.ok()) sync = d.SampleDelta();
  if (d.first_fill) d.wall_s = base::SecondsSince(*d.first_fill);
  // A stop asked before the last bytes landed cancels even when the drain never ticked (the
  // reads finished first); one asked from the final report below comes after the load.
  if (d.options.stop.stop_requested()) d.cancelled = true;
  d.Progress();
  if (d.cancelled) return d.Cancelled();
  if (!st.ok()) return d.ReportIo(std::move(st));
  if (!sync.ok()) return sync;
  // After the last read: a file that changed during the load may have given wrong bytes.
  if (Status changed = d.files_checked ? d.checkpoint.CheckUnchanged() : Status::Ok();
      !changed.ok()) {
    return Status::Error(fmt::format("after the last read: {}", changed.message()), changed.kind());
  }
  d.derive_s = 0;
  for (const auto& [start, end] : d.launch_events) {
    float ms = 0;
    LOADPLAN_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), end.get()));
    d.derive_s += ms / 1e3;
  }
  return Status::Ok();
}

Status CudaBackend::CopyOut(simulator::BufferId buffer, uint64_t offset,
                            std::span<uint8_t> out) const {
  const Impl& d = *impl_;
  if (simulator::Index(buffer) >= d.plan.buffers.size()) {
    return Status::Error(fmt::format("no plan buffer {}", simulator::Index(buffer)));
  }
  const PlannedBuffer& b = d.plan.buffer(buffer);
  if (b.residence != Residence::kResident || !d.pool.held()) {
    return Status::Error(fmt::format("{} is not in a held resident pool", b.name));
  }
  if (offset > b.bytes || out.size() > b.bytes - offset || b.offset + b.bytes > d.pool.bytes()) {
    return Status::Error(
        fmt::format("{}: [{}, +{}) is outside the buffer", b.name, offset, out.size()));
  }
  if (out.empty()) return Status::Ok();
  LOADPLAN_CUDA_TRY(
      cudaMemcpy(out.data(), d.pool.get() + b.offset + offset, out.size(), cudaMemcpyDeviceToHost));
  return Status::Ok();
}

Status CudaBackend::CopyOut(simulator::BufferId buffer, std::vector<uint8_t>& out) const {
  if (simulator::Index(buffer) >= impl_->plan.buffers.size()) {
    return Status::Error(fmt::format("no plan buffer {}", simulator::Index(buffer)));
  }
  out.resize(impl_->plan.buffer(buffer).bytes);
  return CopyOut(buffer, 0, out);
}

}  // namespace loadplan::backend
