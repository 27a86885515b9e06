// Test-only Backend that logs every call (XLA's HeapCallRecorder idea), optionally failing
// at a chosen call, so executor tests need no device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace loadplan::backend::testing {

enum class CallKind : uint8_t {
  kAllocateResident,
  kAllocateArena,
  kFill,
  kLaunch,
  kRelease,
  kFreeArena,
  kFinish,
  kFreeResident
};

struct RecordedCall {
  CallKind kind = CallKind::kLaunch;
  std::optional<std::string> buffer;  // Fill, Release: the buffer's name
  std::optional<uint32_t> call;       // Launch: the clock index
  std::optional<uint32_t> lane;       // Fill
  uint64_t bytes = 0;                 // Allocate*
  std::optional<uint32_t> step;  // the step index the executor passed (none: Finish, FreeResident)
  std::vector<uint32_t> waits;
  bool operator==(const RecordedCall&) const = default;
};

class RecordingBackend final : public Backend {
 public:
  // fail_at: the 0-based index (in the log) of the call that returns an error.
  explicit RecordingBackend(std::optional<size_t> fail_at = std::nullopt) : fail_at_(fail_at) {}

  Status AllocateResident(uint64_t bytes, const StepContext& at) override {
    return Log({.kind = CallKind::kAllocateResident, .bytes = bytes}, at, bytes);
  }
  Status AllocateArena(uint64_t bytes, const StepContext& at) override {
    return Log({.kind = CallKind::kAllocateArena, .bytes = bytes}, at, bytes);
  }
  Status Fill(const simulator::PlannedBuffer& b, simulator::Lane lane,
              const StepContext& at) override {
    return Log({.kind = CallKind::kFill, .buffer = b.name, .lane = simulator::Index(lane)}, at, 0);
  }
  Status Launch(const simulator::PlannedCall& call, const StepContext& at) override {
    return Log({.kind = CallKind::kLaunch, .call = simulator::Index(call.id)}, at, 0);
  }
  Status Release(const simulator::PlannedBuffer& b, const StepContext& at) override {
    return Log({.kind = CallKind::kRelease, .buffer = b.name}, at, 0);
  }
  Status FreeArena(const StepContext& at) override {
    return Log({.kind = CallKind::kFreeArena}, at, 0);
  }
  Status Finish() override {
    log_.push_back({.kind = CallKind::kFinish});
    if (fail_at_ && log_.size() - 1 == *fail_at_)
      return Status::Error("injected failure at finish");
    return Status::Ok();
  }
  Status FreeResident() override {
    log_.push_back({.kind = CallKind::kFreeResident});
    return Status::Ok();
  }
  uint64_t LiveBytes() const override { return live_; }
  uint64_t PeakBytes() const override { return peak_; }

  [[nodiscard]] const std::vector<RecordedCall>& log() const { return log_; }

 private:
  Status Log(RecordedCall c, const StepContext& at, uint64_t bytes) {
    c.step = simulator::Index(at.index);
    for (simulator::StepIndex w : at.waits) c.waits.push_back(simulator::Index(w));
    log_.push_back(std::move(c));
    if (fail_at_ && log_.size() - 1 == *fail_at_) return Status::Error("injected failure");
    live_ += bytes;
    peak_ = std::max(peak_, live_);
    return Status::Ok();
  }

  std::optional<size_t> fail_at_;
  std::vector<RecordedCall> log_;
  uint64_t live_ = 0, peak_ = 0;
};

}  // namespace loadplan::backend::testing
