// The host backend's Launch: bind the call, shadow-check every param's bytes, run the CPU
// reference kernel, mark what it wrote.
#include <fmt/format.h>

#include "backend/call_args.h"
#include "backend/host/host_backend.h"
#include "backend/host/region.h"
#include "kernels/reference.h"

namespace loadplan::backend {
namespace {

using simulator::PlannedBuffer;
using simulator::PlannedCall;
using simulator::Residence;

std::string CallName(const PlannedCall& c) {
  return fmt::format("call {} #{} ({})", c.program, c.call_in_program, c.ptr);
}

}  // namespace

uint8_t* HostBackend::Address(simulator::BufferId buffer) const {
  if (simulator::Index(buffer) >= plan_.buffers.size()) return nullptr;
  const PlannedBuffer& b = plan_.buffer(buffer);
  HostRegion* r = RegionOf(b);
  if (!r || !r->bytes || !r->Holds(b.offset, b.bytes)) return nullptr;
  return r->bytes.get() + b.offset;
}

// A staged buffer may be touched only at clock times inside its window, after its fill,
// before its release, and while no later fill has overwritten its bytes.
Status HostBackend::CheckStaged(const PlannedCall& call, const std::string& param, uint32_t i) {
  const PlannedBuffer& b = plan_.buffers[i];
  HostFailure f{.call = call.ptr, .param = param, .buffer = b.name};
  const std::string who =
      fmt::format("{} param {} touches staged buffer {}", CallName(call), param, b.name);
  const simulator::ClockTime now = simulator::TimeOf(call.id);
  const uint32_t t = simulator::Index(now), begin = simulator::Index(b.window_begin);
  const uint32_t end = simulator::Index(b.window_end);
  if (now < b.window_begin || now >= b.window_end) {
    f.code = HostError::kWindow;
    return Fail(f, fmt::format("{} at clock {}, outside its window [{}, {})", who, t, begin, end));
  }
  if (staged_[i] == Staged::kReleased) {
    f.code = HostError::kReleased;
    return Fail(
        f, fmt::format("{} after its release (window [{}, {}), clock {})", who, begin, end, t));
  }
  if (staged_[i] == Staged::kOverwritten) {
    f.code = HostError::kOverwritten;
    const PlannedBuffer& by = plan_.buffers[*clobber_[i]];
    return Fail(
        f,
        fmt::format("{}, whose arena bytes [{}, {}) were overwritten by the fill of {} at [{}, {})",
                    who, b.offset, b.offset + b.bytes, by.name, by.offset, by.offset + by.bytes));
  }
  return Status::Ok();
}

Status HostBackend::CheckUses(const PlannedCall& call) {
  for (const simulator::PlannedArg& u : call.args) {
    const PlannedBuffer& b = plan_.buffer(u.buffer);
    HostRegion* r = nullptr;
    if (Status s = Locate(b, call.ptr, r); !s.ok()) {
      failure_->param = u.param;
      return Status::Error(fmt::format("{} param {}: {}", CallName(call), u.param, s.message()));
    }
    if (!u.bytes || *u.bytes > b.bytes) {
      return Fail(
          {.code = HostError::kExtent, .call = call.ptr, .param = u.param, .buffer = b.name},
          fmt::format("{} param {}: its extent is {} bytes, buffer {} has {}", CallName(call),
                      u.param, u.bytes ? fmt::format("{}", *u.bytes) : "unknown", b.name, b.bytes));
    }
    const bool staged = b.residence == Residence::kStaged;
    if (staged) {
      if (Status s = CheckStaged(call, u.param, simulator::Index(u.buffer)); !s.ok()) return s;
    }
    if (verifier::Reads(u.access)) {
      if (const auto first = r->FirstUnwritten(b.offset, *u.bytes)) {
        return Fail(
            {.code = HostError::kUnwritten,
             .call = call.ptr,
             .param = u.param,
             .buffer = b.name,
             .offset = *first},
            fmt::format(
                "{} param {} reads buffer {}: byte {} of its {}-byte extent was never written{}",
                CallName(call), u.param, b.name, *first, *u.bytes,
                staged && staged_[simulator::Index(u.buffer)] == Staged::kEmpty
                    ? " (the buffer was never filled)"
                    : ""));
      }
    }
    if (staged && staged_[simulator::Index(u.buffer)] == Staged::kEmpty) {
      return Fail(
          {.code = HostError::kNotFilled, .call = call.ptr, .param = u.param, .buffer = b.name},
          fmt::format(
              "{} param {} touches staged buffer {}, which was never filled (its bytes hold "
              "another buffer's data)",
              CallName(call), u.param, b.name));
    }
  }
  return Status::Ok();
}

Status HostBackend::Launch(const PlannedCall& call, const StepContext&) {
  if (!pool_) {
    return Fail({.code = HostError::kState, .call = call.ptr},
                fmt::format("{}: launched with no resident pool", CallName(call)));
  }
  if (Status s = CheckUses(call); !s.ok()) return s;
  const base::Result<kernels::KernelArgs> bound =
      BindCall(plan_, call, [this](simulator::BufferId i) { return Address(i); });
  if (!bound.ok()) {
    return Fail({.code = HostError::kContract, .call = call.ptr},
                fmt::format("{}: {}", CallName(call), bound.status().message()));
  }
  const kernels::Status k = kernels::RunReference(call.kernel, *bound);
  if (!k.ok()) {
    return Fail({.code = HostError::kKernel, .call = call.ptr},
                fmt::format("{}: kernel {}: {}", CallName(call), call.kernel, k.message()));
  }
  for (const simulator::PlannedArg& u : call.args) {
    if (!verifier::Writes(u.access)) continue;
    const PlannedBuffer& b = plan_.buffer(u.buffer);
    RegionOf(b)->Mark(b.offset, *u.bytes, true);  // CheckUses: u.bytes <= b.bytes
  }
  ++launches_;
  return Status::Ok();
}

}  // namespace loadplan::backend
