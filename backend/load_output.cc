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

// The safetensors specs of the derived carries, which must have fixed shapes.
base::Result<std::vector<TensorSpec>> DerivedSpecs(const simulator::LoadPlan& plan,
                                                   const std::vector<BufferId>& carries) {
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
  return specs;
}

// One carry's bytes, chunk by chunk: copied out through `read`, appended to `file`. Errors
// name the tensor and the byte offset in it.
Status SaveOne(const simulator::PlannedBuffer& b, const ReadResident& read, AtomicFile& file,
               std::vector<uint8_t>& chunk, const std::stop_token& stop) {
  for (uint64_t off = 0; off < b.bytes; off += chunk.size()) {
    if (stop.stop_requested())
      return Status::Error(fmt::format("tensor {} at byte {}: cancelled", b.name, off),
                           base::ErrorKind::kCancelled);
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), b.bytes - off));
    const std::span<uint8_t> out(chunk.data(), n);
    if (Status st = read(b.id, off, out); !st.ok()) {
      return Status::Error(fmt::format("tensor {} at byte {}: copy from the device failed: {}",
                                       b.name, off, st.message()),
                           base::ErrorKind::kDevice);
    }
    if (Status st = file.Write(out); !st.ok())
      return st.WithContext(fmt::format("tensor {} at byte {}", b.name, off));
  }
  return Status::Ok();
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
                                      const std::string& dir, const SaveOptions& options) {
  const std::vector<BufferId> carries = simulator::DerivedCarries(plan);
  base::Result<std::vector<TensorSpec>> specs = DerivedSpecs(plan, carries);
  if (!specs.ok()) return specs.status();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Status::Error(fmt::format("cannot create {}: {}", dir, ec.message()),
                         base::ErrorKind::kIo);
  const std::string path = (std::filesystem::path(dir) / "derived.safetensors").string();
  base::Result<AtomicFile> file = AtomicFile::Create(path, options.faults);
  if (!file.ok()) return file.status();
  const std::string header =
      SafetensorsHeader(*specs, {{"manifest", plan.manifest_name}, {"format", "pt"}});
  std::vector<uint8_t> head(8);
  for (int i = 0; i < 8; ++i) head[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  head.insert(head.end(), header.begin(), header.end());
  if (Status st = file->Write(head); !st.ok()) return st.WithContext(path + ": the header");
  std::vector<uint8_t> chunk(std::max<uint64_t>(options.chunk_bytes, 1));
  for (BufferId id : carries) {
    if (Status st = SaveOne(plan.buffer(id), read, *file, chunk, options.stop); !st.ok())
      return st.WithContext(path);  // the temporary goes with `file`
  }
  if (Status st = file->Commit(); !st.ok()) return st;
  return path;
}

}  // namespace loadplan::backend
