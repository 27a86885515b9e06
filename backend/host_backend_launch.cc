// The host backend's Launch: bind the call, shadow-check every param's bytes, run the CPU
// reference kernel, mark what it wrote.
#include <fmt/format.h>

#include "backend/call_args.h"
#include "backend/host_backend.h"
#include "backend/host_region.h"
#include "kernels/reference.h"

namespace loadplan::backend {
namespace {

using simulator::PlannedBuffer;
using simulator::PlannedCall;
using simulator::Residence;

std::string CallName(const PlannedCall& c) { return fmt::format("call {} #{} ({})", c.program, c.index, c.ptr); }

// The param's extent in bytes as declared, NOT clamped to the buffer (BoundCall's is).
std::optional<uint64_t> DeclaredExtentBytes(const verifier::Manifest& m, const BoundCall& bound,
                                            const std::string& param) {
  const verifier::Kernel* k = m.FindKernel(bound.kernel);
  const verifier::Param* p = k ? verifier::FindParam(*k, param) : nullptr;
  if (!p || !p->extent || !p->dtype) return std::nullopt;
  const verifier::Assignment at(bound.args.scalars.begin(), bound.args.scalars.end());
  const verifier::EvalResult v = verifier::Evaluate(*p->extent, at);
  uint64_t bits = 0;
  if (!v.value || *v.value < 0 ||
      __builtin_mul_overflow(static_cast<uint64_t>(*v.value), uint64_t{verifier::DtypeBits(*p->dtype)}, &bits)) {
    return std::nullopt;
  }
  return bits / 8 + (bits % 8 != 0);
}

}  // namespace

uint8_t* HostBackend::Address(uint32_t buffer) const {
  if (buffer >= plan_.buffers.size()) return nullptr;
  const PlannedBuffer& b = plan_.buffers[buffer];
  HostRegion* r = RegionOf(b);
  if (!r || !r->bytes || !r->Holds(b.offset, b.bytes)) return nullptr;
  return r->bytes.get() + b.offset;
}

// A staged buffer may be touched only at clock times inside its window, after its fill,
// before its release, and while no later fill has overwritten its bytes.
Status HostBackend::CheckStaged(const PlannedCall& call, uint32_t index, const std::string& param, uint32_t i) {
  const PlannedBuffer& b = plan_.buffers[i];
  HostFailure f{.call = call.ptr, .param = param, .buffer = b.name};
  const std::string who = fmt::format("{} param {} touches staged buffer {}", CallName(call), param, b.name);
  if (index < b.window_begin || index >= b.window_end) {
    f.code = HostError::kWindow;
    return Fail(f, fmt::format("{} at clock {}, outside its window [{}, {})", who, index, b.window_begin,
                               b.window_end));
  }
  if (staged_[i] == Staged::kReleased) {
    f.code = HostError::kReleased;
    return Fail(f, fmt::format("{} after its release (window [{}, {}), clock {})", who, b.window_begin,
                               b.window_end, index));
  }
  if (staged_[i] == Staged::kOverwritten) {
    f.code = HostError::kOverwritten;
    const PlannedBuffer& by = plan_.buffers[*clobber_[i]];
    return Fail(f, fmt::format("{}, whose arena bytes [{}, {}) were overwritten by the fill of {} at [{}, {})",
                               who, b.offset, b.offset + b.bytes, by.name, by.offset, by.offset + by.bytes));
  }
  return Status::Ok();
}

Status HostBackend::CheckUses(const PlannedCall& call, uint32_t index, const BoundCall& bound) {
  for (const BoundCall::Use& u : bound.uses) {
    const PlannedBuffer& b = plan_.buffers[u.buffer];
    HostRegion* r = nullptr;
    if (Status s = Locate(b, call.ptr, r); !s.ok()) {
      failure_->param = u.param;
      return Status::Error(fmt::format("{} param {}: {}", CallName(call), u.param, s.message()));
    }
    const uint64_t extent = DeclaredExtentBytes(manifest_, bound, u.param).value_or(u.extent_bytes);
    if (extent > b.bytes) {
      return Fail({.code = HostError::kExtent, .call = call.ptr, .param = u.param, .buffer = b.name},
                  fmt::format("{} param {}: its extent is {} bytes, buffer {} has {}", CallName(call), u.param,
                              extent, b.name, b.bytes));
    }
    const bool staged = b.residence == Residence::kStaged;
    if (staged) {
      if (Status s = CheckStaged(call, index, u.param, u.buffer); !s.ok()) return s;
    }
    if (verifier::Reads(u.access)) {
      if (const auto first = r->FirstUnwritten(b.offset, extent)) {
        return Fail({.code = HostError::kUnwritten, .call = call.ptr, .param = u.param, .buffer = b.name,
                     .offset = *first},
                    fmt::format("{} param {} reads buffer {}: byte {} of its {}-byte extent was never written{}",
                                CallName(call), u.param, b.name, *first, extent,
                                staged && staged_[u.buffer] == Staged::kEmpty ? " (the buffer was never filled)" : ""));
      }
    }
    if (staged && staged_[u.buffer] == Staged::kEmpty) {
      return Fail({.code = HostError::kNotFilled, .call = call.ptr, .param = u.param, .buffer = b.name},
                  fmt::format("{} param {} touches staged buffer {}, which was never filled (its bytes hold "
                              "another buffer's data)", CallName(call), u.param, b.name));
    }
  }
  return Status::Ok();
}

Status HostBackend::Launch(const PlannedCall& call, uint32_t index, const StepContext&) {
  if (!pool_) {
    return Fail({.code = HostError::kState, .call = call.ptr},
                fmt::format("{}: launched with no resident pool", CallName(call)));
  }
  const BoundCall bound = BindCall(manifest_, plan_, call, [this](uint32_t i) { return Address(i); });
  if (!bound.error.empty()) {
    return Fail({.code = HostError::kContract, .call = call.ptr}, fmt::format("{}: {}", CallName(call), bound.error));
  }
  if (Status s = CheckUses(call, index, bound); !s.ok()) return s;
  const kernels::Status k = kernels::RunReference(bound.kernel, bound.args);
  if (!k.ok()) {
    return Fail({.code = HostError::kKernel, .call = call.ptr},
                fmt::format("{}: kernel {}: {}", CallName(call), bound.kernel, k.message()));
  }
  for (const BoundCall::Use& u : bound.uses) {
    if (!verifier::Writes(u.access)) continue;
    const PlannedBuffer& b = plan_.buffers[u.buffer];
    RegionOf(b)->Mark(b.offset, u.extent_bytes, true);
  }
  ++launches_;
  return Status::Ok();
}

}  // namespace loadplan::backend
