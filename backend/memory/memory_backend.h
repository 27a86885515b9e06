// The memory simulator's backend: counts device bytes (live, peak) and simulates OOM.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "simulator/plan.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::backend {

// Counts bytes the way a device would: the pool and the arena are allocations of their
// (already rounded) sizes; fills and releases move bytes inside the arena and are tracked
// separately as `staged` bytes (the live set of sources: its peak is the plan's lower bound).
// With a `limit`, an allocation that would pass it fails with what was asked and what was free.
class MemoryBackend final : public Backend {
 public:
  explicit MemoryBackend(std::optional<uint64_t> limit = std::nullopt) : limit_(limit) {}

  Status AllocateResident(uint64_t bytes, const StepContext& at) override;
  Status AllocateArena(uint64_t bytes, const StepContext& at) override;
  Status Fill(const simulator::PlannedBuffer& buffer, simulator::Lane lane,
              const StepContext& at) override;
  Status Launch(const simulator::PlannedCall& call, const StepContext& at) override;
  Status Release(const simulator::PlannedBuffer& buffer, const StepContext& at) override;
  Status FreeArena(const StepContext& at) override;
  Status Finish() override;
  Status FreeResident() override;
  uint64_t LiveBytes() const override { return live_; }
  uint64_t PeakBytes() const override { return peak_; }

  // Serve-time allocations outside the plan (state, scratch, inputs, outputs), by name.
  Status Allocate(const std::string& what, uint64_t bytes);
  Status Free(const std::string& what);

  [[nodiscard]] uint64_t StagedBytes() const { return staged_; }
  [[nodiscard]] uint64_t StagedPeak() const { return staged_peak_; }
  [[nodiscard]] uint32_t Launches() const { return launches_; }

 private:
  Status Take(const std::string& what, uint64_t bytes);
  void Give(uint64_t bytes);

  std::optional<uint64_t> limit_;
  uint64_t live_ = 0, peak_ = 0;
  uint64_t resident_ = 0;
  std::optional<uint64_t> arena_;
  uint64_t staged_ = 0, staged_peak_ = 0;
  uint32_t launches_ = 0;
  std::map<std::string, uint64_t> serve_;
};

// A replay of one model's life at one point of the variable box: the plan on a
// MemoryBackend (load), then the scratch of `once` programs (once, freed after), then every
// state, scratch, input and output buffer (serve). Peak bytes per phase as measured.
struct SimulatedPeaks {
  Status status;  // an evaluation or allocation error
  uint64_t load = 0, once = 0, serve = 0;
  uint64_t peak = 0;         // max of the three: the backend's PeakBytes()
  uint64_t staged_peak = 0;  // widest live set of sources seen while replaying
};
SimulatedPeaks SimulateMemory(const verifier::Manifest& m, const simulator::LoadPlan& plan,
                              const verifier::Assignment& at,
                              std::optional<uint64_t> limit = std::nullopt);

}  // namespace loadplan::backend
