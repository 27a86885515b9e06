// Comparing a finished load with the host backend, and saving its derived carries.
#include "backend/load_output.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "backend/checkpoint/safetensors_write.h"
#include "simulator/plan_totals.h"

namespace loadplan::backend {
namespace {

using simulator::BufferId;

// One buffer: `read`'s bytes against the host's; a mismatch message or "".
std::string CompareOne(const simulator::PlannedBuffer& b, std::span<const uint8_t> want,
                       const ReadResident& read, std::vector<uint8_t>& bytes, HostComparison& out) {
  bytes.resize(b.bytes);
  if (Status st = read(b.id, 0, bytes); !st.ok())
    return fmt::format("{}: {}", b.name, st.message());
  ++out.compared;
  out.bytes += bytes.size();
  if (want.size() != bytes.size()) {
    return fmt::format("{}: {} bytes read back, {} on the host", b.name, bytes.size(), want.size());
  }
  const auto diff = std::mismatch(bytes.begin(), bytes.end(), want.begin());
  if (diff.first != bytes.end())
    return fmt::format("{}: first difference at byte {}", b.name, diff.first - bytes.begin());
  return {};
}

}  // namespace

HostComparison CompareWithHost(const simulator::LoadPlan& plan, const Checkpoint& checkpoint,
                               const ReadResident& read, bool derive) {
  HostComparison out;
  HostBackend host(plan, checkpoint);
  const ExecuteResult r = Execute(plan, host);
  if (!r.status.ok()) {
    out.host_error = r.status.message();
    return out;
  }
  std::vector<BufferId> buffers = simulator::ResidentWeights(plan);
  if (derive) {
    for (BufferId i : simulator::DerivedCarries(plan)) buffers.push_back(i);
  }
  std::vector<uint8_t> bytes;
  for (BufferId i : buffers) {
    std::string e = CompareOne(plan.buffer(i), host.Bytes(i), read, bytes, out);
    if (!e.empty()) out.mismatches.push_back(std::move(e));
  }
  return out;
}

base::Result<std::string> SaveDerived(const simulator::LoadPlan& plan, const ReadResident& read,
                                      const std::string& dir) {
  const std::vector<BufferId> carries = simulator::DerivedCarries(plan);
  std::vector<TensorSpec> specs;
  for (BufferId i : carries) {
    const simulator::PlannedBuffer& b = plan.buffer(i);
    if (!b.shape)
      return Status::Error(
          fmt::format("{}: its shape uses variables; derived carries are fixed", b.name));
    specs.push_back({.name = b.name, .dtype = b.dtype, .shape = *b.shape});
    if (TensorBytes(specs.back()) != b.bytes)
      return Status::Error(fmt::format("{}: shape and plan size disagree", b.name));
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::Error(fmt::format("cannot create {}: {}", dir, ec.message()),
                         base::ErrorKind::kIo);
  const std::string path = (std::filesystem::path(dir) / "derived.safetensors").string();
  std::string copy_error;
  const Status written =
      WriteSafetensors(path, specs, {{"manifest", plan.manifest_name}, {"format", "pt"}},
                       [&](size_t index, uint64_t offset, std::span<uint8_t> out) {
                         if (!copy_error.empty()) return;
                         if (Status st = read(carries[index], offset, out); !st.ok()) {
                           copy_error = st.message();
                         }
                       });
  if (!written.ok()) return written;
  if (!copy_error.empty()) {
    std::filesystem::remove(path, ec);  // never leave wrong bytes behind, and say if they stay
    if (ec) copy_error += fmt::format("; cannot remove {}: {}", path, ec.message());
    return Status::Error(copy_error, base::ErrorKind::kDevice);
  }
  return path;
}

}  // namespace loadplan::backend
