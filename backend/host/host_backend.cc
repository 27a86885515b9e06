// The host backend's memory steps: allocations with a simulated limit, fills from the
// checkpoint, releases and frees, with the shadow (written bytes, staged-buffer states).
#include "backend/host/host_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/call_args.h"
#include "backend/checkpoint/bindings.h"
#include "backend/host/region.h"
#include "base/status_lines.h"
#include "simulator/phases/phases.h"

namespace loadplan::backend {

using simulator::FormatGiB;
using simulator::PlannedBuffer;
using simulator::Residence;

HostBackend::HostBackend(const simulator::LoadPlan& plan, const Checkpoint& checkpoint,
                         HostOptions options)
    : plan_(plan),
      checkpoint_(checkpoint),
      options_(options),
      faults_(options.io_faults),
      staged_(plan.buffers.size(), Staged::kEmpty),
      clobber_(plan.buffers.size()) {}

HostBackend::~HostBackend() = default;

Status HostBackend::Fail(HostFailure failure, std::string message) {
  failure_ = std::move(failure);
  return Status::Error(std::move(message));
}

Status HostBackend::Take(const char* what, uint64_t bytes) {
  uint64_t after = 0;
  const std::optional<uint64_t>& limit = options_.limit;
  if (__builtin_add_overflow(live_, bytes, &after) || (limit && after > *limit)) {
    const uint64_t free = limit && *limit > live_ ? *limit - live_ : 0;
    Status oom =
        Fail({.code = HostError::kOutOfMemory, .buffer = what},
             fmt::format("allocation of the {} of {} ({} bytes) failed: {} ({} bytes) free of {}",
                         what, FormatGiB(bytes), bytes, FormatGiB(free), free,
                         limit ? FormatGiB(*limit) : "unlimited"));
    return Status::Error(oom.message(), base::ErrorKind::kOutOfMemory).WithBytes(bytes, free);
  }
  live_ = after;
  peak_ = std::max(peak_, live_);
  return Status::Ok();
}

// Before a byte moves: the kernels are ours (same contracts) and the tensors match.
Status HostBackend::Preflight() {
  if (Status st = CheckContracts(plan_); !st.ok()) {
    return Fail({.code = HostError::kContract},
                fmt::format("{}", fmt::join(base::StatusLines(st), "; ")));
  }
  if (Status st = CheckBindings(plan_, checkpoint_); !st.ok()) {
    return Fail({.code = HostError::kTensor},
                fmt::format("{}", fmt::join(base::StatusLines(st), "; ")));
  }
  return Status::Ok();
}

namespace {

// A zeroed host allocation of `bytes` plus its zeroed shadow; nullptr when the host refuses.
std::unique_ptr<HostRegion> NewRegion(uint64_t bytes) {
  auto r = std::make_unique<HostRegion>();
  r->size = bytes;
  if (bytes == 0) return r;
  if (bytes > SIZE_MAX) return nullptr;
  r->bytes.reset(new (std::nothrow) uint8_t[bytes]());
  r->written.reset(new (std::nothrow) uint8_t[bytes]());
  if (!r->bytes || !r->written) return nullptr;
  return r;
}

}  // namespace

Status HostBackend::AllocateResident(uint64_t bytes, const StepContext&) {
  if (pool_) return Fail({.code = HostError::kState}, "the resident pool is already allocated");
  if (Status s = Preflight(); !s.ok()) return s;
  if (Status s = Take("resident pool", bytes); !s.ok()) return s;
  pool_ = NewRegion(bytes);
  if (pool_) return Status::Ok();
  live_ -= bytes;
  return Fail({.code = HostError::kOutOfMemory, .buffer = "resident pool"},
              fmt::format("host allocation of the resident pool of {} ({} bytes) failed",
                          FormatGiB(bytes), bytes));
}

Status HostBackend::AllocateArena(uint64_t bytes, const StepContext&) {
  if (arena_) return Fail({.code = HostError::kState}, "the staging arena is already allocated");
  if (Status s = Take("staging arena", bytes); !s.ok()) return s;
  arena_ = NewRegion(bytes);
  if (arena_) return Status::Ok();
  live_ -= bytes;
  return Fail({.code = HostError::kOutOfMemory, .buffer = "staging arena"},
              fmt::format("host allocation of the staging arena of {} ({} bytes) failed",
                          FormatGiB(bytes), bytes));
}

std::optional<uint32_t> HostBackend::BufferIndex(const PlannedBuffer& b) const {
  const uint32_t i = simulator::Index(b.id);
  if (i >= plan_.buffers.size() || plan_.buffers[i].name != b.name) return std::nullopt;
  return i;
}

HostRegion* HostBackend::RegionOf(const PlannedBuffer& b) const {
  if (b.residence == Residence::kResident) return pool_.get();
  if (b.residence == Residence::kStaged) return arena_.get();
  return nullptr;
}

// Where `b` lives now, or an error naming it: its residence, the region being held, the range.
Status HostBackend::Locate(const PlannedBuffer& b, const std::string& call, HostRegion*& out) {
  out = nullptr;
  const bool staged = b.residence == Residence::kStaged;
  if (b.residence != Residence::kResident && !staged) {
    return Fail(
        {.code = HostError::kState, .call = call, .buffer = b.name},
        fmt::format("buffer {} is neither resident nor staged: the plan does not hold it", b.name));
  }
  HostRegion* r = RegionOf(b);
  if (!r) {
    return Fail({.code = HostError::kState, .call = call, .buffer = b.name},
                fmt::format("buffer {} needs the {}, which is not allocated", b.name,
                            staged ? "staging arena" : "resident pool"));
  }
  if (!r->Holds(b.offset, b.bytes)) {
    return Fail(
        {.code = HostError::kRange, .call = call, .buffer = b.name},
        fmt::format("buffer {} at [{}, {} + {}) is outside the {} byte {}", b.name, b.offset,
                    b.offset, b.bytes, r->size, staged ? "staging arena" : "resident pool"));
  }
  out = r;
  return Status::Ok();
}

// A staged fill overwrites every live staged buffer it overlaps: their readers would read
// this fill's bytes. The plan's windows must prevent it; the shadow records it.
void HostBackend::MarkStagedFill(uint32_t i) {
  const PlannedBuffer& b = plan_.buffers[i];
  for (uint32_t j = 0; j < plan_.buffers.size(); ++j) {
    const PlannedBuffer& o = plan_.buffers[j];
    if (j == i || o.residence != Residence::kStaged || staged_[j] != Staged::kFilled) continue;
    if (Intersect(b.offset, b.bytes, o.offset, o.bytes).second > 0) {
      staged_[j] = Staged::kOverwritten;
      clobber_[j] = i;
    }
  }
  staged_[i] = Staged::kFilled;
  clobber_[i].reset();
}

Status HostBackend::Fill(const PlannedBuffer& buffer, simulator::Lane, const StepContext&) {
  const std::optional<uint32_t> i = BufferIndex(buffer);
  if (!i) {
    return Fail({.code = HostError::kState, .buffer = buffer.name},
                fmt::format("fill of {}, which is not in the plan", buffer.name));
  }
  const PlannedBuffer& b = plan_.buffers[*i];
  HostRegion* r = nullptr;
  if (Status s = Locate(b, "", r); !s.ok()) return Status::Error("fill: " + s.message());
  const base::Result<std::vector<FillPart>> parts = LocateFill(b, checkpoint_);
  if (!parts.ok()) {
    return Fail({.code = HostError::kTensor, .buffer = b.name},
                fmt::format("fill of {}: {}", b.name, parts.status().message()));
  }
  uint8_t* dst = r->bytes.get() + b.offset;
  for (const FillPart& part : *parts) {  // tensors one after another, each run in order
    for (uint64_t k = 0; k < part.runs.count; ++k) {
      const uint64_t at = part.runs.first + k * part.runs.stride;
      if (Status s = ReadRange(b.name, part.at, at, part.runs.run_bytes, dst); !s.ok()) return s;
      dst += part.runs.run_bytes;
    }
  }
  r->Mark(b.offset, b.bytes, true);
  if (b.residence == Residence::kStaged) MarkStagedFill(*i);
  return Status::Ok();
}

Status HostBackend::ReadFailure(const std::string& buffer, const Status& cause) {
  failure_ = HostFailure{.code = HostError::kRead, .buffer = buffer};
  return cause.WithMessage(fmt::format("fill of {}: {}", buffer, cause.message()));
}

// `bytes` of the tensor from `begin` into `dst`, chunk by chunk; the files checked unchanged
// before the first.
Status HostBackend::ReadRange(const std::string& buffer, const Checkpoint::Located& loc,
                              uint64_t begin, uint64_t bytes, uint8_t* dst) {
  if (!files_checked_) {
    if (Status s = checkpoint_.CheckUnchanged(); !s.ok()) return ReadFailure(buffer, s);
    files_checked_ = true;
  }
  const uint64_t chunk = std::max<uint64_t>(1, options_.read_chunk_bytes);
  for (uint64_t off = 0; off < bytes; off += chunk) {
    const uint64_t n = std::min(chunk, bytes - off);
    Status s = options_.direct_io
                   ? ReadDirectChunk(loc, begin + off, {dst + off, n})
                   : loc.file->Read(*loc.info, begin + off, {dst + off, n}, &faults_);
    if (!s.ok()) return ReadFailure(buffer, s);
  }
  return Status::Ok();
}

// One chunk of a tensor by O_DIRECT into the bounce buffer, then to `out`.
Status HostBackend::ReadDirectChunk(const Checkpoint::Located& loc, uint64_t offset,
                                    std::span<uint8_t> out) {
  const FileRef file = loc.file->Ref();
  const base::Result<const DirectFile*> direct = direct_files_.Of(file);
  if (!direct.ok()) return direct.status();
  const uint64_t need = DirectBufferBytes(std::max<uint64_t>(1, options_.read_chunk_bytes));
  if (!bounce_) {
    bounce_.reset(static_cast<uint8_t*>(std::aligned_alloc(kDirectAlign, need)));
    if (!bounce_)
      return Status::Error(fmt::format("a direct-read buffer of {} bytes", need),
                           base::ErrorKind::kOutOfMemory)
          .WithBytes(need, std::nullopt);
  }
  const base::Result<uint64_t> at = ReadDirect(
      file, **direct, loc.file->FileOffset(*loc.info) + offset, out.size(), {bounce_.get(), need},
      {.tensor = loc.info->name, .tensor_offset = offset, .faults = &faults_});
  if (!at.ok()) return at.status();
  std::memcpy(out.data(), bounce_.get() + *at, out.size());
  return Status::Ok();
}

Status HostBackend::Finish() {
  if (!files_checked_) return Status::Ok();  // nothing was read
  if (Status s = checkpoint_.CheckUnchanged(); !s.ok()) {
    failure_ = HostFailure{.code = HostError::kRead};
    return Status::Error(fmt::format("after the last read: {}", s.message()), s.kind());
  }
  return Status::Ok();
}

Status HostBackend::Release(const PlannedBuffer& buffer, const StepContext&) {
  const std::optional<uint32_t> i = BufferIndex(buffer);
  if (!i || plan_.buffers[*i].residence != Residence::kStaged) {
    return Fail(
        {.code = HostError::kState, .buffer = buffer.name},
        fmt::format("release of {}, which is not a staged buffer of the plan", buffer.name));
  }
  const PlannedBuffer& b = plan_.buffers[*i];
  HostRegion* r = nullptr;
  if (Status s = Locate(b, "", r); !s.ok()) return Status::Error("release: " + s.message());
  if (staged_[*i] != Staged::kFilled && staged_[*i] != Staged::kOverwritten) {
    return Fail(
        {.code = HostError::kReleased, .buffer = b.name},
        fmt::format("release of {}, which is not filled ({})", b.name,
                    staged_[*i] == Staged::kReleased ? "released already" : "never filled"));
  }
  // Its bytes become unwritten, except where a live staged buffer (filled later) sits.
  r->Mark(b.offset, b.bytes, false);
  for (uint32_t j = 0; j < plan_.buffers.size(); ++j) {
    const PlannedBuffer& o = plan_.buffers[j];
    if (j == *i || o.residence != Residence::kStaged || staged_[j] != Staged::kFilled) continue;
    const auto [begin, length] = Intersect(b.offset, b.bytes, o.offset, o.bytes);
    r->Mark(begin, length, true);
  }
  staged_[*i] = Staged::kReleased;
  return Status::Ok();
}

Status HostBackend::FreeArena(const StepContext&) {
  if (!arena_)
    return Fail({.code = HostError::kState}, "freeing a staging arena that is not allocated");
  live_ -= std::min(live_, arena_->size);
  arena_.reset();
  return Status::Ok();
}

Status HostBackend::FreeResident() {
  if (pool_) live_ -= std::min(live_, pool_->size);
  pool_.reset();
  return Status::Ok();
}

std::span<const uint8_t> HostBackend::Bytes(simulator::BufferId buffer) const {
  if (simulator::Index(buffer) >= plan_.buffers.size()) return {};
  const PlannedBuffer& b = plan_.buffer(buffer);
  const HostRegion* r = RegionOf(b);
  if (!r || !r->Holds(b.offset, b.bytes) || b.bytes == 0) return {};
  return {r->bytes.get() + b.offset, b.bytes};
}

bool HostBackend::FullyWritten(simulator::BufferId buffer) const {
  if (simulator::Index(buffer) >= plan_.buffers.size()) return false;
  const PlannedBuffer& b = plan_.buffer(buffer);
  const HostRegion* r = RegionOf(b);
  return r && r->Holds(b.offset, b.bytes) && !r->FirstUnwritten(b.offset, b.bytes);
}

}  // namespace loadplan::backend
