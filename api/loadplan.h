// loadplan's public C++ API: verify a manifest, plan its load, and load a checkpoint onto a
// GPU into memory the caller keeps. One header for programs (`find_package(loadplan)`,
// target `loadplan::loadplan`); docs/api.md is its guide.
//
//   auto model = loadplan::api::LoadFiles("model.json", "ckpt/", {.device = 0});
//   if (!model.ok()) { /* model.status(): what, where, how much */ }
//   const loadplan::api::LoadedTensor* w = model->Find("l0.fc1_w");  // device pointer, dtype,
//   shape
//
// Nothing here throws; every fallible call returns base::Status / base::Result<T>.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/load_defaults.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/device_allocation.h"
#include "base/dtype.h"
#include "base/status.h"
#include "simulator/planner/planner.h"
#include "simulator/plan.h"
#include "simulator/timing/profile.h"
#include "verifier/manifest.h"
#include "verifier/verify.h"

namespace loadplan::api {

// ---- verify and plan ----

// Parses and verifies manifest text or a manifest file: every diagnostic, sorted; when there
// is no error, `result.verified` is set (what PlanLoad and Load take). A file that cannot be
// read (or is over the parser's size limit) is a kIo error.
verifier::CheckOutput CheckText(std::string_view text);
base::Result<verifier::CheckOutput> CheckFile(const std::string& path);
// A manifest file's text, read the one way every input is (base::ReadInputFile: a regular
// file within the parser's size limit; a FIFO or a device is refused before any read, kIo).
base::Result<std::string> ReadManifestText(const std::string& path);

// The load plan of a verified manifest, checked by the independent plan checker before it is
// returned (a plan the checker rejects is an ErrorKind::kInternal error: a planner bug).
base::Result<simulator::LoadPlan> PlanLoad(const verifier::VerifiedManifest& manifest,
                                           const simulator::PlanOptions& options = {});

// ---- load ----

struct LoadOptions {
  int device = 0;
  uint32_t io_threads = backend::kDefaultIoThreads;    // pread threads, each with a copy stream
  uint64_t chunk_bytes = backend::kDefaultChunkBytes;  // one pread + one host-to-device copy
  // 0: one pread per chunk; else preads of at most this size fill each chunk (buffered reads
  // only: with direct_io the load is refused; above chunk_bytes it is chunk_bytes).
  uint64_t read_bytes = 0;
  std::optional<uint64_t> memory_limit;  // refuse to allocate beyond this many device bytes
  // Set: before anything is allocated, the load's peak plus this many bytes (what the serving
  // process needs beside the weights) must fit the device's free memory (CheckRoom), else
  // kOutOfMemory with both figures. Python's load() sets it (0 by default); the CLI's run
  // checks the room itself, for its report.
  std::optional<uint64_t> reserve;
  bool naive = false;      // the baseline plan: every checkpoint tensor resident (no staging)
  bool derive = true;      // false: no derive kernel runs (carries stay as allocated)
  bool direct_io = false;  // O_DIRECT reads in 4 KiB blocks, around the page cache
  // A slice along a dimension > 0: run by run, its covering span, its pages mapped, or chosen
  // per slice (auto) from slice_costs (a read_rate of 0 takes the built-in profile's
  // page-cache read rate, or its direct read rate with direct_io; `run --machine` gives the
  // profile's, with its per-run and per-page costs where `calibrate` measured them).
  simulator::timing::SliceRead slice_read = simulator::timing::SliceRead::kAuto;
  simulator::timing::SliceReadCosts slice_costs;
  simulator::PlanOptions plan;  // placement, lanes, prefetch overrides (naive above wins)
  // Bytes handed to the device so far and the load's total, on the loading thread, about
  // every 100 ms and once at the end (done == total).
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Cancel from any thread (std::stop_source::request_stop): Load returns
  // ErrorKind::kCancelled within about 100 ms, with every byte it allocated given back.
  std::stop_token stop;
};

// A resident buffer of a loaded model: a weight read from the checkpoint or a carry a derive
// program wrote (`exported`: the manifest exports it to serving).
struct LoadedTensor {
  std::string name;
  verifier::BufferKind kind = verifier::BufferKind::kWeight;
  bool exported = false;
  base::Dtype dtype = base::Dtype::kU8;
  std::vector<int64_t> shape;  // empty for a scalar, and for a shape that depends on variables
  bool shaped = false;         // the shape is known (a scalar: shaped, shape empty)
  uint64_t bytes = 0;
  void* data = nullptr;      // device pointer on LoadedModel::device(); null when bytes is 0
  simulator::BufferId id{};  // in LoadedModel::plan()
};

// What a load measured and what the plan predicted (bytes; seconds).
struct LoadReport {
  uint64_t predicted_peak = 0;        // resident pool + staging arena, as the plan rounded them
  uint64_t resident_bytes = 0;        // what the model keeps (the rounded pool)
  uint64_t fill_bytes = 0;            // checkpoint bytes read
  backend::CudaMemory memory;         // measured: peak allocated, cudaMemGetInfo's peak drop
  backend::CudaTimes times;           // read, copy, derive and wall time
  [[nodiscard]] double GBps() const;  // fill_bytes / wall_s in 10^9 bytes per second
};

// A model on the GPU. It owns the resident pool (weights and carries; the staging arena was
// freed when derive ended) and frees it when destroyed, so device memory returns to what it
// was before the load. Move-only.
class LoadedModel {
 public:
  LoadedModel(LoadedModel&&) noexcept = default;
  LoadedModel& operator=(LoadedModel&&) noexcept = default;
  ~LoadedModel() = default;

  [[nodiscard]] const std::vector<LoadedTensor>& tensors() const { return tensors_; }
  // nullptr when no resident buffer has that name.
  [[nodiscard]] const LoadedTensor* Find(std::string_view name) const;
  [[nodiscard]] const LoadReport& report() const { return report_; }
  [[nodiscard]] const simulator::LoadPlan& plan() const { return *plan_; }
  [[nodiscard]] int device() const { return pool_.device(); }
  [[nodiscard]] uint64_t device_bytes() const { return pool_.bytes(); }

  // Copies bytes [offset, offset + out.size()) of tensor `id` to host memory.
  [[nodiscard]] base::Status CopyOut(simulator::BufferId id, uint64_t offset,
                                     std::span<uint8_t> out) const;
  // Frees the device memory now and says whether CUDA agreed (the destructor does it unchecked).
  // Afterwards every tensor's data pointer is dangling.
  [[nodiscard]] base::Status Release();

 private:
  friend base::Result<LoadedModel> LoadPlanned(std::shared_ptr<const simulator::LoadPlan>,
                                               const backend::Checkpoint&, const LoadOptions&);
  LoadedModel() = default;
  std::shared_ptr<const simulator::LoadPlan> plan_;
  backend::DeviceAllocation pool_;
  std::vector<LoadedTensor> tensors_;
  LoadReport report_;
};

// The bounds of the load options, the same from every front end (kOption, the option named as
// the C++/Python field and as the CLI flag): io_threads in [1, 256] (the CLI's bounds), chunk_bytes
// in [4 KiB, 1 GiB], read_bytes 0 or in [4 KiB, chunk_bytes] and only with buffered reads.
base::Status CheckLoadOptions(const LoadOptions& options);

// The machine profile a load takes its I/O pair (and its default reserve) from: `loadplan run
// --machine` and Python's load(machine=). A file that cannot be read or parsed is kOption,
// worded the same for both: "machine (--machine): PATH: ...".
base::Result<simulator::timing::MachineProfile> ReadMachineOption(const std::string& path);

// The machine's figures in `options`, one precedence for every front end (`loadplan run`,
// Python's load()): the I/O pair given explicitly wins, else the profile's (what `calibrate
// --choose-io` chose), else the built-in defaults; with a profile, a slice's read rate (auto)
// is its page-cache rate, or its direct-read rate with direct_io.
void ApplyMachine(const simulator::timing::MachineProfile* machine,
                  std::optional<uint32_t> io_threads, std::optional<uint64_t> chunk_bytes,
                  LoadOptions& options);

// What GPU `device` has (its free memory after this process's context exists), once the load
// of `plan` plus `reserve` bytes beside it is known to fit; else kOutOfMemory saying the
// bytes needed (pool + arena + reserve) and free, or kDevice when the GPU cannot be read.
struct DeviceRoom {
  uint64_t free = 0, total = 0;
  std::string name;
};
base::Result<DeviceRoom> CheckRoom(const simulator::LoadPlan& plan, int device, uint64_t reserve);

// Loads a planned checkpoint: CheckLoadOptions, CheckRoom when options.reserve is set, preflight
// (every tensor present with its dtype and size, every kernel contract), the CUDA backend, the
// plan's steps, then the pool handed to the model. Errors: kInvalidInput (preflight), kIo (a read),
// kOutOfMemory (bytes asked and free), kDevice (no GPU, a CUDA error), kCancelled. Nothing stays
// allocated after an error.
base::Result<LoadedModel> LoadPlanned(std::shared_ptr<const simulator::LoadPlan> plan,
                                      const backend::Checkpoint& checkpoint,
                                      const LoadOptions& options = {});
// Plans (PlanLoad, with options.naive and options.plan) and loads.
base::Result<LoadedModel> Load(const verifier::VerifiedManifest& manifest,
                               const backend::Checkpoint& checkpoint,
                               const LoadOptions& options = {});
// Opens the checkpoint folder (safetensors files or a sharded index), plans and loads.
base::Result<LoadedModel> Load(const verifier::VerifiedManifest& manifest,
                               const std::string& checkpoint_dir, const LoadOptions& options = {});
// The front door, what `loadplan run` and Python's load() take (api/launch.h, ResolveSource):
// `source` a manifest file; a deployment file (the stage `rank` names, else the launcher's
// environment's, on that stage's GPU: options.device is replaced); or a Hugging Face model
// folder (imported with the default options; the folder is the checkpoint when
// `checkpoint_dir` is empty). Reads, verifies, plans and loads: a manifest with errors is
// kInvalidInput whose message lists the diagnostics (CheckFile gives them as data).
base::Result<LoadedModel> LoadFiles(const std::string& source, const std::string& checkpoint_dir,
                                    const LoadOptions& options = {},
                                    std::optional<uint32_t> rank = std::nullopt);

}  // namespace loadplan::api
