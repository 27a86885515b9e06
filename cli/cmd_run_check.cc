// `loadplan run --check` (the host backend's bytes vs the GPU's) and `--save-derived`.
#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "backend/executor.h"
#include "backend/host_backend.h"
#include "backend/safetensors_write.h"
#include "cli/cmd_run_internal.h"

namespace loadplan::cli::run {

using simulator::LoadPlan;

std::vector<uint32_t> DerivedCarries(const LoadPlan& plan) {
  std::set<uint32_t> out;
  for (const simulator::PlannedCall& c : plan.calls) {
    for (uint32_t w : c.writes) {
      if (w < plan.buffers.size() && plan.buffers[w].kind == verifier::BufferKind::kCarry) out.insert(w);
    }
  }
  return {out.begin(), out.end()};
}

std::vector<uint32_t> Weights(const LoadPlan& plan) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) {
    const simulator::PlannedBuffer& b = plan.buffers[i];
    if (b.kind == verifier::BufferKind::kWeight && b.residence == simulator::Residence::kResident) out.push_back(i);
  }
  return out;
}

bool Report::PeakMatches() const {
  return std::all_of(runs.begin(), runs.end(),
                     [&](const Measurement& m) { return m.memory.peak_allocated == predicted_peak; });
}

CheckSummary CompareWithHost(const verifier::Manifest& m, const LoadPlan& plan, const backend::Checkpoint& ckpt,
                             const backend::CudaBackend& gpu, bool derive) {
  CheckSummary out;
  backend::HostBackend host(m, plan, ckpt);
  const backend::ExecuteResult r = backend::Execute(plan, host);
  if (!r.status.ok()) {
    out.host_error = r.status.message();
    return out;
  }
  std::vector<uint32_t> buffers = Weights(plan);
  if (derive) {
    for (uint32_t i : DerivedCarries(plan)) buffers.push_back(i);
  }
  std::vector<uint8_t> bytes;
  for (uint32_t i : buffers) {
    const std::string& name = plan.buffers[i].name;
    const std::span<const uint8_t> want = host.Bytes(i);
    if (backend::Status st = gpu.CopyOut(i, bytes); !st.ok()) {
      out.mismatches.push_back(fmt::format("{}: {}", name, st.message()));
      continue;
    }
    ++out.compared;
    out.bytes += bytes.size();
    if (want.size() != bytes.size()) {
      out.mismatches.push_back(fmt::format("{}: {} bytes on the GPU, {} on the host", name, bytes.size(), want.size()));
      continue;
    }
    const auto diff = std::mismatch(bytes.begin(), bytes.end(), want.begin());
    if (diff.first != bytes.end()) {
      out.mismatches.push_back(fmt::format("{}: first difference at byte {}", name, diff.first - bytes.begin()));
    }
  }
  return out;
}

namespace {

std::string Spec(const verifier::Manifest& m, const simulator::PlannedBuffer& b, backend::TensorSpec& out) {
  const verifier::Buffer* buf = m.FindBuffer(b.name);
  if (buf == nullptr) return fmt::format("{} is not in the manifest", b.name);
  out = {.name = b.name, .dtype = buf->dtype, .shape = {}};
  for (const verifier::Expr& e : buf->shape) {
    const verifier::EvalResult v = verifier::Evaluate(e, {});
    if (!v.value || *v.value < 0) return fmt::format("{}: shape does not evaluate without variables", b.name);
    out.shape.push_back(static_cast<uint64_t>(*v.value));
  }
  if (backend::TensorBytes(out) != b.bytes) return fmt::format("{}: shape and plan size disagree", b.name);
  return {};
}

}  // namespace

std::string SaveDerived(const verifier::Manifest& m, const LoadPlan& plan, const backend::CudaBackend& gpu,
                        const std::string& dir, std::string& path) {
  const std::vector<uint32_t> carries = DerivedCarries(plan);
  std::vector<backend::TensorSpec> specs(carries.size());
  for (size_t i = 0; i < carries.size(); ++i) {
    if (std::string e = Spec(m, plan.buffers[carries[i]], specs[i]); !e.empty()) return e;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create {}: {}", dir, ec.message());
  path = (std::filesystem::path(dir) / "derived.safetensors").string();
  std::string copy_error;
  const std::string e = backend::WriteSafetensors(
      path, specs, {{"manifest", m.name}, {"format", "pt"}}, [&](size_t index, uint64_t offset, std::span<uint8_t> out) {
        if (!copy_error.empty()) return;
        if (backend::Status st = gpu.CopyOut(carries[index], offset, out); !st.ok()) copy_error = st.message();
      });
  if (!e.empty()) return e;
  if (!copy_error.empty()) std::filesystem::remove(path, ec);  // never leave wrong bytes behind
  return copy_error;
}

}  // namespace loadplan::cli::run
