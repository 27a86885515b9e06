// The executor: runs plan steps in order over a Backend; cleans up after the first error.
#include "backend/executor.h"

#include <fmt/format.h>

namespace loadplan::backend {
namespace {

using simulator::Index;
using simulator::LoadPlan;
using simulator::Step;
using simulator::StepIndex;
using simulator::StepKind;

std::string Describe(const LoadPlan& plan, const Step& s) {
  auto buffer = [&] {
    return s.buffer && Index(*s.buffer) < plan.buffers.size() ? plan.buffer(*s.buffer).name : "?";
  };
  switch (s.kind) {
    case StepKind::kAllocResident: return "allocate resident pool";
    case StepKind::kAllocArena: return "allocate staging arena";
    case StepKind::kFill:
      return fmt::format("fill {} on lane {}", buffer(), s.lane ? Index(*s.lane) : 0);
    case StepKind::kLaunch:
      if (s.call && Index(*s.call) < plan.calls.size()) {
        return fmt::format("launch {} call {}", plan.call(*s.call).program,
                           plan.call(*s.call).call_in_program);
      }
      return "launch ?";
    case StepKind::kRelease: return fmt::format("release {}", buffer());
    case StepKind::kFreeArena: return "free staging arena";
  }
  return "?";
}

// A call's own ids: its position, and every buffer it binds, reads or writes in range.
Status ValidateCall(const LoadPlan& plan, const simulator::PlannedCall& c, simulator::CallId at) {
  if (c.id != at) return Status::Error("the call's id is not its position in the plan");
  const size_t n = plan.buffers.size();
  for (const simulator::PlannedArg& a : c.args) {
    if (Index(a.buffer) >= n)
      return Status::Error(fmt::format("param {}: buffer index out of range", a.param));
  }
  for (const auto* list : {&c.reads, &c.writes}) {
    for (simulator::BufferId b : *list) {
      if (Index(b) >= n) return Status::Error("a read or written buffer index is out of range");
    }
  }
  return Status::Ok();
}

// A bad index is reported, never followed.
Status ValidateStep(const LoadPlan& plan, uint32_t i) {
  const Step& s = plan.steps[i];
  for (StepIndex w : s.waits) {
    if (Index(w) >= i)
      return Status::Error(fmt::format("waits for step {}, which is not earlier", Index(w)));
  }
  const bool needs_buffer = s.kind == StepKind::kFill || s.kind == StepKind::kRelease;
  if (needs_buffer && (!s.buffer || Index(*s.buffer) >= plan.buffers.size())) {
    return Status::Error("buffer index missing or out of range");
  }
  if (needs_buffer && Index(plan.buffer(*s.buffer).id) != Index(*s.buffer)) {
    return Status::Error("the buffer's id is not its position in the plan");
  }
  if (s.kind == StepKind::kFill && (!s.lane || Index(*s.lane) >= plan.lanes)) {
    return Status::Error(fmt::format("lane missing or not below the plan's {} lanes", plan.lanes));
  }
  if (s.kind == StepKind::kLaunch && (!s.call || Index(*s.call) >= plan.calls.size())) {
    return Status::Error("call index missing or out of range");
  }
  if (s.kind == StepKind::kLaunch) return ValidateCall(plan, plan.call(*s.call), *s.call);
  return Status::Ok();
}

struct Held {
  bool resident = false;
  bool arena = false;
};

Status RunStep(const LoadPlan& plan, uint32_t i, Backend& backend, Held& held) {
  const Step& s = plan.steps[i];
  const StepContext at{.index = StepIndex{i}, .waits = s.waits};
  switch (s.kind) {
    case StepKind::kAllocResident: {
      Status st = backend.AllocateResident(plan.resident_bytes_rounded, at);
      held.resident = held.resident || st.ok();
      return st;
    }
    case StepKind::kAllocArena: {
      Status st = backend.AllocateArena(plan.arena_bytes_rounded, at);
      held.arena = held.arena || st.ok();
      return st;
    }
    case StepKind::kFill: return backend.Fill(plan.buffer(*s.buffer), *s.lane, at);
    case StepKind::kLaunch: return backend.Launch(plan.call(*s.call), at);
    case StepKind::kRelease: return backend.Release(plan.buffer(*s.buffer), at);
    case StepKind::kFreeArena: {
      Status st = backend.FreeArena(at);
      held.arena = held.arena && !st.ok();
      return st;
    }
  }
  return Status::Error("unknown step kind");
}

Status Cleanup(const LoadPlan& plan, Backend& backend, const Held& held) {
  std::string errors;
  if (held.arena) {
    const uint32_t end = static_cast<uint32_t>(plan.steps.size());
    Status st = backend.FreeArena(StepContext{.index = StepIndex{end}, .waits = {}});
    if (!st.ok()) errors += "freeing the arena: " + st.message();
  }
  if (held.resident) {
    Status st = backend.FreeResident();
    if (!st.ok())
      errors += (errors.empty() ? "" : "; ") + ("freeing the resident pool: " + st.message());
  }
  return errors.empty() ? Status::Ok() : Status::Error(errors);
}

}  // namespace

ExecuteResult Execute(const LoadPlan& plan, Backend& backend) {
  ExecuteResult r;
  Held held;
  for (uint32_t i = 0; i < plan.steps.size(); ++i) {
    Status st = ValidateStep(plan, i);
    if (st.ok()) st = RunStep(plan, i, backend, held);
    if (!st.ok()) {
      r.status = st.WithMessage(
          fmt::format("step {} ({}): {}", i, Describe(plan, plan.steps[i]), st.message()));
      r.failed_step = StepIndex{i};
      r.cleanup = Cleanup(plan, backend, held);
      return r;
    }
    ++r.steps_done;
  }
  // Done means done: an asynchronous backend's last fills and launches complete here.
  if (Status st = backend.Finish(); !st.ok()) {
    r.status = st.WithMessage(fmt::format("finishing the load: {}", st.message()));
    r.cleanup = Cleanup(plan, backend, held);
  }
  return r;
}

}  // namespace loadplan::backend
