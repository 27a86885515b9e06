// The host backend: runs a plan on real bytes in host memory with the CPU reference
// kernels, and shadow-checks every byte a derive call reads (docs/host-backend.md).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/checkpoint/checkpoint.h"
#include "backend/load_defaults.h"
#include "simulator/plan.h"
#include "verifier/manifest.h"

namespace loadplan::backend {

struct HostRegion;

struct HostOptions {
  // Simulated device capacity: an allocation that would pass it fails (OOM), saying what was
  // asked, for which allocation and how much was free. nullopt: no limit.
  std::optional<uint64_t> limit;
  // A fill reads its tensor in pread calls of at most this many bytes (the CUDA backend's
  // chunking; tests make it small so that a load makes many reads).
  uint64_t read_chunk_bytes = kDefaultChunkBytes;
  // Test seam, never a user option: faults injected into this load's checkpoint reads.
  IoFaults io_faults;
  // Reads as the CUDA backend's `direct_io` does (O_DIRECT, whole 4 KiB blocks, a bounce
  // buffer per chunk), so that CI runs the direct path on the same loads.
  bool direct_io = false;
};

// What a failed step violated: tests assert {code, call pointer}, not wording.
enum class HostError : uint8_t {
  kOutOfMemory,  // the limit or the host allocator refused an allocation
  kState,        // allocated twice, no pool/arena held, a buffer of the wrong residence
  kRange,        // a buffer's [offset, offset + bytes) is outside its pool or arena
  kTensor,       // a bound tensor is missing from the checkpoint or its byte size differs
  kContract,     // a kernel the manifest calls is not this backend's (contracts, BindCall)
  kExtent,       // a param's extent exceeds the bound buffer
  kUnwritten,    // a read param's extent holds a byte nothing wrote (fill or derive)
  kWindow,       // a staged buffer is touched outside its window [window_begin, window_end)
  kReleased,     // a staged buffer is touched after its release, or released when not filled
  kNotFilled,    // a staged buffer is touched without having been filled
  kOverwritten,  // a staged buffer's bytes were overwritten by a later fill while it was live
  kKernel,       // the reference kernel rejected its arguments
  kRead,         // a checkpoint read failed, or a file changed since it was opened
};

struct HostFailure {
  HostError code = HostError::kState;
  std::string call;    // the call's pointer (/programs/<p>/calls/<i>); empty outside Launch
  std::string param;   // the kernel param, when one is at fault
  std::string buffer;  // the buffer at fault
  std::optional<uint64_t> offset;  // kUnwritten: first unwritten byte, relative to the buffer
  bool operator==(const HostFailure&) const = default;
};

// Executes plan steps on host memory. The pool and the arena are real allocations of the
// sizes the executor passes (the plan's rounded sizes), so LiveBytes/PeakBytes count like
// MemoryBackend's and the peak equals the simulator's prediction.
//
// Shadow state (one byte per pool/arena byte: written or not; one state per staged buffer):
//   Fill     reads the checkpoint tensor, or each of a list one after another (pread, in
//            chunks of read_chunk_bytes), and marks the buffer written; a staged fill marks
//            every live staged buffer it overlaps as overwritten. Before the first read every
//            file is checked unchanged since Checkpoint::Open (CheckUnchanged), and again at
//            Finish.
//   Launch   before running: each param's extent fits its buffer; every staged buffer is
//            inside its window, filled, not released nor overwritten; every byte of each
//            read extent is written. After running: write extents are marked written.
//   Release  marks the source's arena bytes unwritten (a later stale read is caught).
// Every violation is a Status error (and LastFailure()), never UB.
// Cost: O(bytes) per fill/launch plus O(staged buffers) per staged fill; memory 2x pool+arena.
//
// `plan` and `checkpoint` must outlive the backend (temporaries are refused at compile time).
class HostBackend final : public Backend {
 public:
  HostBackend(const simulator::LoadPlan& plan, const Checkpoint& checkpoint,
              HostOptions options = {});
  HostBackend(simulator::LoadPlan&&, const Checkpoint&, HostOptions = {}) = delete;
  ~HostBackend() override;
  HostBackend(const HostBackend&) = delete;
  HostBackend& operator=(const HostBackend&) = delete;

  // AllocateResident first checks the plan's calls against the registry (CheckContracts)
  // and the plan's bindings against the checkpoint (CheckBindings): before a byte moves.
  Status AllocateResident(uint64_t bytes, const StepContext& at) override;
  Status AllocateArena(uint64_t bytes, const StepContext& at) override;
  Status Fill(const simulator::PlannedBuffer& buffer, simulator::Lane lane,
              const StepContext& at) override;
  Status Launch(const simulator::PlannedCall& call, const StepContext& at) override;
  Status Release(const simulator::PlannedBuffer& buffer, const StepContext& at) override;
  Status FreeArena(const StepContext& at) override;
  // Every step ran to completion already; the files read must still be what was opened.
  Status Finish() override;
  Status FreeResident() override;
  uint64_t LiveBytes() const override { return live_; }
  uint64_t PeakBytes() const override { return peak_; }

  // The bytes of plan buffer `buffer` where they live now: in the pool (weights, carries) or
  // the arena while it is held (sources). Empty when the buffer is neither, or its pool/arena
  // is not held.
  [[nodiscard]] std::span<const uint8_t> Bytes(simulator::BufferId buffer) const;
  // Whether every byte of `buffer` is written (shadow state), false where Bytes() is empty.
  [[nodiscard]] bool FullyWritten(simulator::BufferId buffer) const;
  // The violation behind the last error Status, if the last failing step was a checked one.
  [[nodiscard]] const std::optional<HostFailure>& LastFailure() const { return failure_; }
  [[nodiscard]] uint32_t Launches() const { return launches_; }
  // Read calls the fault seam counted (it counts only while HostOptions::io_faults sets one).
  [[nodiscard]] uint64_t ReadCalls() const { return faults_.reads(); }

 private:
  enum class Staged : uint8_t { kEmpty, kFilled, kReleased, kOverwritten };

  Status Fail(HostFailure failure, std::string message);
  Status Take(const char* what, uint64_t bytes);
  Status Preflight();
  HostRegion* RegionOf(const simulator::PlannedBuffer& b) const;
  Status Locate(const simulator::PlannedBuffer& b, const std::string& call, HostRegion*& out);
  uint8_t* Address(simulator::BufferId buffer) const;
  void MarkStagedFill(uint32_t buffer);
  Status ReadRange(const std::string& buffer, const Checkpoint::Located& loc, uint64_t begin,
                   uint64_t bytes, uint8_t* dst);
  Status ReadFailure(const std::string& buffer, const Status& cause);
  Status ReadDirectChunk(const Checkpoint::Located& loc, uint64_t offset, std::span<uint8_t> out);
  Status CheckUses(const simulator::PlannedCall& call);
  Status CheckStaged(const simulator::PlannedCall& call, const std::string& param, uint32_t buffer);
  // The plan's own buffer at `b`'s id, or nullopt when `b` is not one of this plan's buffers.
  std::optional<uint32_t> BufferIndex(const simulator::PlannedBuffer& b) const;

  const simulator::LoadPlan& plan_;
  const Checkpoint& checkpoint_;
  HostOptions options_;
  IoFaultState faults_;
  bool files_checked_ = false;  // CheckUnchanged ran before the first read
  // direct_io: each file's O_DIRECT descriptor (by its buffered fd) and one aligned buffer.
  DirectFiles direct_files_;
  std::unique_ptr<uint8_t, void (*)(void*)> bounce_{nullptr, &std::free};
  std::unique_ptr<HostRegion> pool_, arena_;
  std::vector<Staged> staged_;                    // per plan buffer (staged ones only matter)
  std::vector<std::optional<uint32_t>> clobber_;  // kOverwritten: the fill that did it
  uint64_t live_ = 0, peak_ = 0;
  uint32_t launches_ = 0;
  std::optional<HostFailure> failure_;
};

}  // namespace loadplan::backend
