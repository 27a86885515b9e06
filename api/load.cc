// The API's load: preflight, the CUDA backend over the plan's steps, then the resident pool
// handed to a LoadedModel (the backend's threads, streams and pinned buffers go with it).
#include <fmt/format.h>

#include "api/loadplan.h"

#include "api/launch.h"
#include "importer/import.h"
#include "backend/executor.h"
#include "simulator/plan_totals.h"
#include "simulator/timing/profile.h"

namespace loadplan::api {
namespace {

backend::CudaOptions CudaOptionsOf(const LoadOptions& o) {
  simulator::timing::SliceReadCosts costs = o.slice_costs;
  if (costs.read_rate <= 0) {
    const simulator::timing::MachineProfile p = simulator::timing::DefaultH200Profile();
    costs.read_rate = o.direct_io ? p.direct_read : p.page_cache_read;
  }
  return {.io_threads = o.io_threads,
          .chunk_bytes = o.chunk_bytes,
          .read_bytes = o.read_bytes,
          .memory_limit = o.memory_limit,
          .device = o.device,
          .derive = o.derive,
          .direct_io = o.direct_io,
          .slice_read = o.slice_read,
          .slice_costs = costs,
          .progress = o.progress,
          .stop = o.stop};
}

std::vector<LoadedTensor> TensorsOf(const simulator::LoadPlan& plan,
                                    const backend::DeviceAllocation& pool) {
  std::vector<LoadedTensor> out;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (b.residence != simulator::Residence::kResident) continue;
    LoadedTensor t{.name = b.name,
                   .kind = b.kind,
                   .exported = b.exported,
                   .dtype = b.dtype,
                   .bytes = b.bytes,
                   .data = b.bytes == 0 ? nullptr : static_cast<uint8_t*>(pool.get()) + b.offset,
                   .id = b.id};
    if (b.shape) t.shape.assign(b.shape->begin(), b.shape->end());
    t.shaped = b.shape.has_value();
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

double LoadReport::GBps() const {
  return times.wall_s > 0 ? static_cast<double>(fill_bytes) / times.wall_s / 1e9 : 0;
}

const LoadedTensor* LoadedModel::Find(std::string_view name) const {
  for (const LoadedTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

base::Status LoadedModel::CopyOut(simulator::BufferId id, uint64_t offset,
                                  std::span<uint8_t> out) const {
  if (!plan_ || simulator::Index(id) >= plan_->buffers.size()) {
    return base::Status::Error(
        fmt::format("no buffer {} in the loaded plan", simulator::Index(id)));
  }
  const simulator::PlannedBuffer& b = plan_->buffer(id);
  if (b.residence != simulator::Residence::kResident) {
    return base::Status::Error(fmt::format("{} is not resident in the loaded model", b.name));
  }
  if (offset > b.bytes || out.size() > b.bytes - offset) {
    return base::Status::Error(
        fmt::format("{}: copy of {} bytes at offset {} is outside its {} bytes", b.name, out.size(),
                    offset, b.bytes));
  }
  return pool_.CopyToHost(b.offset + offset, out);
}

base::Status LoadedModel::Release() {
  tensors_.clear();
  return pool_.Free();
}

base::Result<LoadedModel> LoadPlanned(std::shared_ptr<const simulator::LoadPlan> plan,
                                      const backend::Checkpoint& checkpoint,
                                      const LoadOptions& options) {
  if (!plan) return base::Status::Error("LoadPlanned: no plan");
  if (base::Status st = CheckLoadOptions(options); !st.ok()) return st;
  backend::PrepareCudaProcess();  // eager module loading, when CUDA is not yet initialised
  if (base::Status usable = backend::DeviceUsable(options.device); !usable.ok()) return usable;
  if (options.reserve) {  // before anything is allocated
    if (base::Result<DeviceRoom> room = CheckRoom(*plan, options.device, *options.reserve);
        !room.ok())
      return room.status();
  }
  backend::CudaBackend::CreateResult created =
      backend::CudaBackend::Create(*plan, checkpoint, CudaOptionsOf(options));
  if (!created.ok()) return created.status();
  std::unique_ptr<backend::CudaBackend>& gpu = *created;
  const backend::ExecuteResult run = backend::Execute(*plan, *gpu);
  if (!run.status.ok()) {
    if (run.cleanup.ok()) return run.status;
    return run.status.WithMessage(run.status.message() + "; cleanup: " + run.cleanup.message());
  }
  base::Result<backend::DeviceAllocation> pool = gpu->TakeResident();
  if (!pool.ok()) {
    base::Status freed = gpu->FreeResident();
    return freed.ok() ? pool.status()
                      : base::Status::Error(pool.status().message() + "; " + freed.message(),
                                            base::ErrorKind::kInternal);
  }
  LoadedModel model;
  model.report_ = {.predicted_peak = simulator::LoadPeakBytes(*plan),
                   .resident_bytes = plan->resident_bytes_rounded,
                   .fill_bytes = simulator::FillBytes(*plan),
                   .memory = gpu->Memory(),
                   .times = gpu->Times()};
  gpu.reset();  // I/O threads, streams and pinned buffers go before the model is used
  model.pool_ = std::move(*pool);
  model.tensors_ = TensorsOf(*plan, model.pool_);
  model.plan_ = std::move(plan);
  return model;
}

base::Result<LoadedModel> Load(const verifier::VerifiedManifest& manifest,
                               const backend::Checkpoint& checkpoint, const LoadOptions& options) {
  simulator::PlanOptions plan_options = options.plan;
  plan_options.naive = plan_options.naive || options.naive;
  base::Result<simulator::LoadPlan> plan = PlanLoad(manifest, plan_options);
  if (!plan.ok()) return plan.status();
  return LoadPlanned(std::make_shared<const simulator::LoadPlan>(std::move(*plan)), checkpoint,
                     options);
}

base::Result<LoadedModel> Load(const verifier::VerifiedManifest& manifest,
                               const std::string& checkpoint_dir, const LoadOptions& options) {
  base::Result<std::unique_ptr<backend::Checkpoint>> checkpoint =
      backend::Checkpoint::Open(checkpoint_dir);
  if (!checkpoint.ok()) return checkpoint.status();
  return Load(manifest, **checkpoint, options);
}

namespace {

base::Result<LoadedModel> LoadVerifiedOutput(const verifier::CheckOutput& checked,
                                             const std::string& name, const std::string& dir,
                                             const LoadOptions& options) {
  if (!checked.result.verified) {
    return base::Status::Error(
        name + " does not verify:\n" + verifier::FormatText(checked.result.diags, name),
        base::ErrorKind::kInvalidInput);
  }
  return Load(*checked.result.verified, dir, options);
}

}  // namespace

base::Result<LoadedModel> LoadFiles(const std::string& source, const std::string& checkpoint_dir,
                                    const LoadOptions& options, std::optional<uint32_t> rank) {
  const base::Result<LoadSource> resolved = ResolveSource(source, rank, options.device);
  if (!resolved.ok()) return resolved.status();
  LoadOptions o = options;
  o.device = resolved->device;
  if (!resolved->folder.empty()) {  // a model folder: its manifest, and its own checkpoint
    const base::Result<importer::ImportResult> imported = importer::ImportModel(resolved->folder);
    if (!imported.ok()) return imported.status();
    return LoadVerifiedOutput(CheckText(imported->text), resolved->folder,
                              checkpoint_dir.empty() ? resolved->folder : checkpoint_dir, o);
  }
  if (!resolved->text.empty()) {  // read once, by ResolveSource
    return LoadVerifiedOutput(CheckText(resolved->text), resolved->manifest, checkpoint_dir, o);
  }
  base::Result<verifier::CheckOutput> checked = CheckFile(resolved->manifest);
  if (!checked.ok()) return checked.status();
  return LoadVerifiedOutput(*checked, resolved->manifest, checkpoint_dir, o);
}

}  // namespace loadplan::api
