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

#include "simulator/plan.h"

namespace loadplan::backend::cuda {

class StepEvents {
 public:
  explicit StepEvents(size_t steps) : events_(steps) {}

  // Step `step` is final: waiting for it on a stream means waiting for `events`
  // (none: nothing to wait for on the device). Out-of-range steps are ignored.
  void Publish(simulator::StepIndex at, std::vector<cudaEvent_t> events) {
    const uint32_t step = simulator::Index(at);
    {
      std::lock_guard lock(mu_);
      if (step >= events_.size()) return;
      events_[step] = std::move(events);
    }
    cv_.notify_all();
  }

  // Blocks until every step in `waits` is published; appends their events to `out`.
  // Out-of-range waits count as published with no events (the executor rejects them).
  void Collect(std::span<const simulator::StepIndex> waits, std::vector<cudaEvent_t>& out) {
    std::unique_lock lock(mu_);
    for (simulator::StepIndex at : waits) {
      const uint32_t w = simulator::Index(at);
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
