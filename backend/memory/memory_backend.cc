// The memory simulator's backend: byte counting with an optional limit (simulated OOM).
#include "backend/memory/memory_backend.h"

#include <fmt/format.h>

#include "backend/executor.h"
#include "simulator/phases/phases.h"

namespace loadplan::backend {

using simulator::FormatGiB;

Status MemoryBackend::Take(const std::string& what, uint64_t bytes) {
  uint64_t after = 0;
  if (__builtin_add_overflow(live_, bytes, &after) || (limit_ && after > *limit_)) {
    const uint64_t free = limit_ && *limit_ > live_ ? *limit_ - live_ : 0;
    return Status::Error(
               fmt::format("{} of {} ({} bytes) failed: {} free of {}", what, FormatGiB(bytes),
                           bytes, FormatGiB(free), limit_ ? FormatGiB(*limit_) : "unlimited"),
               base::ErrorKind::kOutOfMemory)
        .WithBytes(bytes, free);
  }
  live_ = after;
  peak_ = std::max(peak_, live_);
  return Status::Ok();
}

void MemoryBackend::Give(uint64_t bytes) { live_ -= std::min(live_, bytes); }

Status MemoryBackend::AllocateResident(uint64_t bytes, const StepContext&) {
  if (resident_ > 0) return Status::Error("the resident pool is already allocated");
  Status s = Take("allocation of the resident pool", bytes);
  if (s.ok()) resident_ = bytes;
  return s;
}

Status MemoryBackend::AllocateArena(uint64_t bytes, const StepContext&) {
  if (arena_) return Status::Error("the staging arena is already allocated");
  Status s = Take("allocation of the staging arena", bytes);
  if (s.ok()) arena_ = bytes;
  return s;
}

Status MemoryBackend::Fill(const simulator::PlannedBuffer& b, simulator::Lane, const StepContext&) {
  uint64_t end = 0;
  const bool wraps = __builtin_add_overflow(b.offset, b.bytes, &end);
  if (b.residence == simulator::Residence::kStaged) {
    if (!arena_) return Status::Error(fmt::format("fill of {} with no staging arena", b.name));
    if (wraps || end > *arena_) {
      return Status::Error(fmt::format("fill of {} at [{}, {}) outside the {} byte arena", b.name,
                                       b.offset, b.offset + b.bytes, *arena_));
    }
    staged_ += b.bytes;
    staged_peak_ = std::max(staged_peak_, staged_);
    return Status::Ok();
  }
  if (wraps || end > resident_) {
    return Status::Error(fmt::format("fill of {} at [{}, {}) outside the {} byte resident pool",
                                     b.name, b.offset, b.offset + b.bytes, resident_));
  }
  return Status::Ok();
}

Status MemoryBackend::Launch(const simulator::PlannedCall&, const StepContext&) {
  ++launches_;
  return Status::Ok();
}

Status MemoryBackend::Release(const simulator::PlannedBuffer& b, const StepContext&) {
  if (staged_ < b.bytes)
    return Status::Error(fmt::format("release of {}, which is not staged", b.name));
  staged_ -= b.bytes;
  return Status::Ok();
}

Status MemoryBackend::FreeArena(const StepContext&) {
  if (!arena_) return Status::Error("freeing a staging arena that is not allocated");
  Give(*arena_);
  arena_.reset();
  staged_ = 0;
  return Status::Ok();
}

Status MemoryBackend::Finish() { return Status::Ok(); }

Status MemoryBackend::FreeResident() {
  Give(resident_);
  resident_ = 0;
  return Status::Ok();
}

Status MemoryBackend::Allocate(const std::string& what, uint64_t bytes) {
  if (serve_.contains(what)) return Status::Error(fmt::format("{} is already allocated", what));
  Status s = Take("allocation of " + what, bytes);
  if (s.ok()) serve_[what] = bytes;
  return s;
}

Status MemoryBackend::Free(const std::string& what) {
  auto it = serve_.find(what);
  if (it == serve_.end()) return Status::Error(fmt::format("{} is not allocated", what));
  Give(it->second);
  serve_.erase(it);
  return Status::Ok();
}

namespace {

// Allocates each buffer at its size at `at`; returns the live bytes after, or an error.
Status AllocateAll(MemoryBackend& mb, const std::vector<const verifier::Buffer*>& buffers,
                   const verifier::Assignment& at) {
  for (const verifier::Buffer* b : buffers) {
    const base::Result<int64_t> r = verifier::Evaluate(verifier::ByteSize(*b), at);
    if (!r.ok() || *r < 0)
      return Status::Error(fmt::format("size of {}: {}", b->name, r.status().message()));
    Status s = mb.Allocate(b->name, static_cast<uint64_t>(*r));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

SimulatedPeaks SimulateMemory(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                              const verifier::Assignment& at, std::optional<uint64_t> limit) {
  SimulatedPeaks out;
  MemoryBackend mb(limit);
  const ExecuteResult run = Execute(plan, mb);
  out.load = mb.PeakBytes();
  out.staged_peak = mb.StagedPeak();
  out.status = run.status;
  if (!run.status.ok()) return out;
  const std::vector<const verifier::Buffer*> once = simulator::OnceScratch(m);
  out.status = AllocateAll(mb, once, at);
  out.once = mb.LiveBytes();
  for (const verifier::Buffer* b : once) {
    if (out.status.ok()) out.status = mb.Free(b->name);
  }
  if (out.status.ok()) out.status = AllocateAll(mb, simulator::ServeBuffers(m), at);
  out.serve = mb.LiveBytes();
  out.peak = mb.PeakBytes();
  return out;
}

}  // namespace loadplan::backend
