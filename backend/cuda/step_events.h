// The plan's steps as an asynchronous backend sees them: per step, the CUDA events that
// complete it, published once they are final. Waiters block on the host until then.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace loadplan::backend::cuda {

class StepEvents {
 public:
  explicit StepEvents(size_t steps) : events_(steps) {}

  // Step `step` is final: waiting for it on a stream means waiting for `events`
  // (none: nothing to wait for on the device). Out-of-range steps are ignored.
  void Publish(uint32_t step, std::vector<cudaEvent_t> events) {
    {
      std::lock_guard lock(mu_);
      if (step >= events_.size()) return;
      events_[step] = std::move(events);
    }
    cv_.notify_all();
  }

  // Blocks until every step in `waits` is published; appends their events to `out`.
  // Out-of-range waits count as published with no events (the executor rejects them).
  void Collect(std::span<const uint32_t> waits, std::vector<cudaEvent_t>& out) {
    std::unique_lock lock(mu_);
    for (uint32_t w : waits) {
      if (w >= events_.size()) continue;
      cv_.wait(lock, [&] { return events_[w].has_value(); });
      out.insert(out.end(), events_[w]->begin(), events_[w]->end());
    }
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<std::vector<cudaEvent_t>>> events_;
};

}  // namespace loadplan::backend::cuda
