// The CUDA backend on a small gpt-oss-shaped model (2 layers, 4 experts, padded dims):
// every derived carry and weight equals the host backend's bytes; the measured peak equals
// the prediction; OOM and faults at every allocation and step leave device memory at its
// starting value; lanes, prefetch, placement, chunking and naive mode give the same bytes.
// Skips without a GPU (CI: cudaErrorInsufficientDriver).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/checkpoint/safetensors_write.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/measure/probe.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "backend/load_output.h"
#include "backend/preflight.h"
#include "backend/checkpoint/synthetic.h"
#include "base/status_lines.h"
#include "examples/examples.h"
#include "builders/kernels.h"
#include "simulator/plan_totals.h"
#include "simulator/planner/planner.h"
#include "tests/gpu/small_gpt_oss.h"
#include "verifier/builder.h"
#include "verifier/verify.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using simulator::BufferId;
using simulator::LoadPlan;
using simulator::PlanOptions;
using Bytes = std::map<std::string, std::vector<uint8_t>>;

// Every kernel module loads at context creation, before any memory baseline.
const bool kEager = [] {
  PrepareCudaProcess();
  return true;
}();

std::vector<BufferId> Compared(const LoadPlan& plan, bool carries, bool weights) {
  std::vector<BufferId> out;
  if (weights) out = simulator::ResidentWeights(plan);
  if (carries) {
    for (BufferId i : simulator::DerivedCarries(plan)) out.push_back(i);
  }
  return out;
}

uint64_t FreeBytes() {
  size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  return free;
}

class CudaBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!DeviceUsable().ok()) return;
    dir_ = (fs::path(::testing::TempDir()) / fmt_dir()).string();
    model_ = new Model(MakeModel(dir_));
    if (model_->error.empty()) WarmUp();
  }
  // What the CUDA runtime sets up once per process and keeps (the context's descriptors, a
  // pool for local memory, the staging behind a pageable copy-out) is set up here, before any
  // test takes a baseline: each test's figures then hold run alone, first, or in any order.
  static void WarmUp() {
    const LoadPlan plan = simulator::Plan(*model_->verified, {});
    for (const bool direct : {false, true}) {
      const CudaOptions o{.io_threads = 3, .chunk_bytes = 64 << 10, .direct_io = direct};
      const CudaBackend::CreateResult created = CudaBackend::Create(plan, *model_->checkpoint, o);
      if (!created.ok() || !Execute(plan, **created).status.ok()) continue;
      std::vector<uint8_t> bytes;
      for (BufferId i : Compared(plan, true, true)) (void)(*created)->CopyOut(i, bytes);
    }
    (void)ProbeH2DBesideHostRead(*model_->checkpoint, 3, 64 << 10, 4, 0);
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  static std::string fmt_dir() { return "loadplan-cuda-test-" + std::to_string(::getpid()); }

  void SetUp() override {
    if (const base::Status why = DeviceUsable(); !why.ok()) GTEST_SKIP() << why.message();
    ASSERT_NE(model_, nullptr);
    ASSERT_EQ(model_->error, "");
  }

  const verifier::Manifest& M() const { return model_->manifest; }
  const Checkpoint& Ckpt() const { return *model_->checkpoint; }
  LoadPlan MakePlan(PlanOptions o = {}) const { return simulator::Plan(*model_->verified, o); }

  // Execute ends with Backend::Finish: an ok result means the load is complete.
  struct Run {
    CudaBackend::CreateResult created;
    ExecuteResult exec;
  };
  Run RunGpu(const LoadPlan& plan, CudaOptions o) const {
    Run r{.created = CudaBackend::Create(plan, Ckpt(), std::move(o))};
    if (!r.created.ok()) return r;
    r.exec = Execute(plan, **r.created);
    return r;
  }

  // A load that a read fault stopped: kIo naming the file, the tensor and `text`, its cleanup
  // clean and the device's free memory back at the baseline. Returns the message.
  static std::string ExpectReadFaultGaveBack(const Run& bad, std::string_view text) {
    const std::string& m = bad.exec.status.message();
    EXPECT_EQ(bad.exec.status.kind(), base::ErrorKind::kIo) << m;
    EXPECT_NE(m.find(".safetensors: tensor "), std::string::npos) << m;
    EXPECT_NE(m.find(text), std::string::npos) << m;
    EXPECT_TRUE(bad.exec.cleanup.ok()) << bad.exec.cleanup.message();
    EXPECT_EQ(FreeBytes(), (*bad.created)->Memory().baseline_free);
    return m;
  }

  Bytes GpuBytes(const LoadPlan& plan, const CudaBackend& gpu, bool carries = true,
                 bool weights = true) const {
    Bytes out;
    for (BufferId i : Compared(plan, carries, weights)) {
      std::vector<uint8_t> b;
      EXPECT_TRUE(gpu.CopyOut(i, b).ok()) << plan.buffer(i).name;
      out[plan.buffer(i).name] = std::move(b);
    }
    return out;
  }

  Bytes HostBytes(const LoadPlan& plan, bool carries = true, bool weights = true) const {
    HostBackend host(plan, Ckpt());
    const ExecuteResult r = Execute(plan, host);
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    Bytes out;
    for (BufferId i : Compared(plan, carries, weights)) {
      const auto s = host.Bytes(i);
      out[plan.buffer(i).name] = {s.begin(), s.end()};
    }
    return out;
  }

  // Expects a run that failed at step `step`, cleaned up, and gave every byte back.
  static void ExpectCleanFailure(const Run& r, uint32_t step) {
    ASSERT_TRUE(r.created.ok()) << r.created.status().message();
    EXPECT_FALSE(r.exec.status.ok());
    EXPECT_EQ(r.exec.failed_step, simulator::StepIndex{step}) << r.exec.status.message();
    EXPECT_TRUE(r.exec.cleanup.ok()) << r.exec.cleanup.message();
    EXPECT_EQ((*r.created)->LiveBytes(), 0u);
    EXPECT_EQ(FreeBytes(), (*r.created)->Memory().baseline_free);
  }

  static inline Model* model_ = nullptr;
  static inline std::string dir_;
};

CudaOptions Small() { return {.io_threads = 3, .chunk_bytes = 64 << 10}; }

TEST_F(CudaBackendTest, DerivedCarriesAndWeightsEqualHostBackend) {
  const LoadPlan plan = MakePlan();
  const Run r = RunGpu(plan, Small());
  ASSERT_TRUE(r.created.ok()) << r.created.status().message();
  ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
  const Bytes gpu = GpuBytes(plan, **r.created);
  const Bytes host = HostBytes(plan);
  EXPECT_EQ(Compared(plan, true, false).size(), 12u);  // 6 derived expert tensors per layer
  ASSERT_EQ(gpu.size(), host.size());
  for (const auto& [name, bytes] : host) {
    ASSERT_EQ(gpu.at(name).size(), bytes.size()) << name;
    EXPECT_TRUE(gpu.at(name) == bytes) << name;
  }
  const std::vector<uint8_t>& fc1 = gpu.at("l0.fc1_w");
  EXPECT_NE(std::count(fc1.begin(), fc1.end(), 0), static_cast<long>(fc1.size()));  // not vacuous
  EXPECT_EQ((*r.created)->Times().launches, plan.calls.size());
  // The library's comparison (what `loadplan run --check` prints) agrees.
  const CudaBackend& backend = **r.created;
  const HostComparison cmp = CompareWithHost(
      plan, Ckpt(),
      [&backend](BufferId b, uint64_t offset, std::span<uint8_t> out) {
        return backend.CopyOut(b, offset, out);
      },
      true);
  EXPECT_TRUE(cmp.ok()) << cmp.host_error << (cmp.mismatches.empty() ? "" : cmp.mismatches[0]);
  EXPECT_EQ(cmp.compared, Compared(plan, true, true).size());
}

TEST_F(CudaBackendTest, MeasuredPeakEqualsPrediction) {
  const LoadPlan plan = MakePlan();
  const Run r = RunGpu(plan, Small());
  ASSERT_TRUE(r.created.ok()) << r.created.status().message();
  ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
  const uint64_t predicted = plan.resident_bytes_rounded + plan.arena_bytes_rounded;
  ASSERT_GT(plan.arena_bytes_rounded, 0u);
  EXPECT_EQ((*r.created)->PeakBytes(), predicted);
  const CudaMemory mem = (*r.created)->Memory();
  EXPECT_EQ(mem.peak_allocated, predicted);
  EXPECT_GE(mem.peak_used_delta + plan.granularity, predicted);
  EXPECT_LE(mem.peak_used_delta, predicted + plan.granularity);
  EXPECT_EQ((*r.created)->LiveBytes(), plan.resident_bytes_rounded);  // the arena went back
  const CudaTimes t = (*r.created)->Times();
  EXPECT_EQ(t.bytes_filled, simulator::FillBytes(plan));
  EXPECT_GT(t.wall_s, 0);
  EXPECT_GT(t.submit_s, 0);  // the plan's thread queued every fill
  EXPECT_LT(t.submit_s, t.wall_s);
  EXPECT_GE(t.job_wait_s, 0);  // a thread's waits for a job lie inside the load
  EXPECT_LE(t.job_wait_s, t.wall_s);
  EXPECT_GT(t.enqueue_s, 0);  // every chunk's copy was queued
  EXPECT_LT(t.enqueue_s, t.wall_s);
  // A thread's time before its first chunk, in its loop and after its last lies in the load.
  EXPECT_GE(t.start_s, 0);
  EXPECT_GE(t.end_s, 0);
  EXPECT_LE(t.start_s + t.read_s + t.end_s, t.wall_s * 1.001);
}

TEST_F(CudaBackendTest, OutOfMemoryAtEachAllocationGivesEverythingBack) {
  const LoadPlan plan = MakePlan();
  ASSERT_EQ(plan.steps[0].kind, simulator::StepKind::kAllocResident);
  ASSERT_EQ(plan.steps[1].kind, simulator::StepKind::kAllocArena);
  const uint64_t limits[] = {plan.resident_bytes_rounded - 1,
                             plan.resident_bytes_rounded + plan.arena_bytes_rounded - 1};
  for (uint32_t k = 0; k < 2; ++k) {
    SCOPED_TRACE(k);
    CudaOptions o = Small();
    o.memory_limit = limits[k];
    ExpectCleanFailure(RunGpu(plan, o), k);
  }
}

TEST_F(CudaBackendTest, FaultAtEveryAllocationGivesEverythingBack) {
  const LoadPlan plan = MakePlan();
  for (uint32_t k = 0; k < 2; ++k) {
    SCOPED_TRACE(k);
    CudaOptions o = Small();
    o.fail_at_allocation = k;
    ExpectCleanFailure(RunGpu(plan, o), k);
  }
}

TEST_F(CudaBackendTest, FaultAtEveryStepGivesEverythingBack) {
  const LoadPlan plan = MakePlan({.lanes = 2, .prefetch = 2});
  ASSERT_GT(plan.steps.size(), 20u);
  for (uint32_t k = 0; k < plan.steps.size(); ++k) {
    SCOPED_TRACE(k);
    CudaOptions o{.io_threads = 2, .chunk_bytes = 32 << 10};
    o.fail_at_step = k;
    ExpectCleanFailure(RunGpu(plan, o), k);
  }
}

TEST_F(CudaBackendTest, LanesPrefetchPlacementAndChunksGiveIdenticalBytes) {
  const Bytes want = HostBytes(MakePlan());
  for (uint32_t lanes : {1u, 2u, 4u}) {
    for (uint32_t prefetch : {0u, 1u, 3u}) {
      for (auto policy :
           {simulator::PlacementPolicy::kFirstFit, simulator::PlacementPolicy::kBestFit}) {
        SCOPED_TRACE(testing::Message()
                     << lanes << " lanes, prefetch " << prefetch << ", policy " << int(policy));
        const LoadPlan plan = MakePlan({.lanes = lanes, .prefetch = prefetch, .placement = policy});
        const CudaOptions o{.io_threads = lanes + 1,
                            .chunk_bytes = prefetch == 3 ? 4096u : 96u << 10};
        const Run r = RunGpu(plan, o);
        ASSERT_TRUE(r.created.ok()) << r.created.status().message();
        ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
        EXPECT_EQ((*r.created)->PeakBytes(),
                  plan.resident_bytes_rounded + plan.arena_bytes_rounded);
        EXPECT_TRUE(GpuBytes(plan, **r.created) == want);
      }
    }
  }
}

TEST_F(CudaBackendTest, NaiveLoadGivesTheSameBytesAtTheNaivePeak) {
  const LoadPlan plan = MakePlan({.naive = true});
  EXPECT_EQ(plan.arena_bytes_rounded, 0u);
  const Run r = RunGpu(plan, Small());
  ASSERT_TRUE(r.created.ok()) << r.created.status().message();
  ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
  EXPECT_EQ((*r.created)->PeakBytes(), plan.resident_bytes_rounded);
  EXPECT_GT(plan.resident_bytes, MakePlan().resident_bytes);  // both round to 4 MiB here
  const Bytes staged = HostBytes(MakePlan(), true, false);
  const Bytes got = GpuBytes(plan, **r.created, true, false);
  EXPECT_TRUE(got == staged);
}

TEST_F(CudaBackendTest, NoDeriveLoadsTheWeights) {
  const LoadPlan plan = MakePlan();
  CudaOptions o = Small();
  o.derive = false;
  const Run r = RunGpu(plan, o);
  ASSERT_TRUE(r.created.ok()) << r.created.status().message();
  ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
  EXPECT_TRUE(GpuBytes(plan, **r.created, false, true) == HostBytes(plan, false, true));
}

TEST_F(CudaBackendTest, PreflightReportsEveryBindingMismatchBeforeAllocating) {
  LoadPlan bad = MakePlan();
  int changed = 0;
  for (simulator::PlannedBuffer& b : bad.buffers) {
    if (b.name == "l0.fc1_w.raw") b.tensor = "model.layers.0.no_such_tensor", ++changed;
    if (b.name == "l1.q_w") b.shape->front() = 7, ++changed;
  }
  ASSERT_EQ(changed, 2);
  EXPECT_EQ(base::StatusLines(Preflight(bad, Ckpt())).size(), 2u);
  const uint64_t before = FreeBytes();
  const CudaBackend::CreateResult c = CudaBackend::Create(bad, Ckpt(), Small());
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(c.status().ok());
  EXPECT_EQ(FreeBytes(), before);
}

// A source bound by 8 listed tensors of 64 KiB (chunks of 16 KiB on 3 threads interleave the
// parts) that a derive call copies, and a weight of 3 listed BF16 tensors; the parts spread
// over shards. Each part is its own I/O request at its running offset, and the fill's step is
// published once, after the last part: the derive call that waits for it reads every byte.
// The bytes equal the host backend's and the listed tensors' concatenation, buffered and
// direct; a listed tensor missing, or a list whose bytes do not sum, is refused before any
// allocation, naming the buffer and the tensor.
TEST_F(CudaBackendTest, TensorListsFillEachPartAtItsOffset) {
  constexpr int64_t kPart = 64 << 10;
  std::vector<std::string> parts;
  for (int i = 7; i >= 0; --i) parts.push_back(fmt::format("model.x.experts.{}.w", i));
  verifier::ManifestBuilder b("parts");
  builders::AddStandardKernels(b, {"copy"});
  b.CheckpointParts("x.raw", parts, base::Dtype::kU8, {8, kPart});
  b.Carry("x", base::Dtype::kU8, {8 * kPart}, {.exported = true});
  b.CheckpointParts("g", {"model.g.2", "model.g.0", "model.g.1"}, base::Dtype::kBF16, {3, 1000});
  b.AddDerive("derive.x").Call("copy", {{"src", "x.raw"}, {"dst", "x"}, {"n", 8 * kPart}}, {64});
  const verifier::BuildResult built = b.Build();
  ASSERT_TRUE(built.ok()) << built.errors.front();
  verifier::VerifyResult v = verifier::Verify(built.manifest);
  ASSERT_TRUE(v.verified.has_value());
  const std::string dir = dir_ + "-parts";
  ASSERT_TRUE(
      GenerateCheckpoint(built.manifest, {.dir = dir, .seed = 3, .shard_bytes = 200'000}).ok());
  base::Result<std::unique_ptr<Checkpoint>> ckpt = Checkpoint::Open(dir);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().message();
  ASSERT_GT((*ckpt)->files().size(), 1u);
  const LoadPlan plan = simulator::Plan(*v.verified);
  const auto concat = [&](const std::vector<std::string>& names) {
    std::vector<uint8_t> out;
    for (const std::string& n : names) {
      const Checkpoint::Located loc = (*ckpt)->Find(n);
      const base::Result<std::vector<uint8_t>> part = loc.file->ReadAll(*loc.info);
      EXPECT_TRUE(part.ok()) << n;
      if (part.ok()) out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  };
  ASSERT_EQ(plan.buffers.size(), 3u);  // in name order: g, x, x.raw
  const BufferId g{0}, x{1}, raw{2};
  ASSERT_EQ(plan.buffer(raw).tensors, parts);
  HostBackend host(plan, **ckpt);
  ASSERT_TRUE(Execute(plan, host).status.ok());
  ASSERT_EQ(std::vector<uint8_t>(host.Bytes(x).begin(), host.Bytes(x).end()), concat(parts));
  const bool direct = DirectFile::Open((*ckpt)->files()[0].Ref()).ok();
  for (const bool direct_io : {false, true}) {
    if (direct_io && !direct) continue;
    SCOPED_TRACE(direct_io ? "direct" : "buffered");
    const CudaOptions o{.io_threads = 3, .chunk_bytes = 16 << 10, .direct_io = direct_io};
    const CudaBackend::CreateResult c = CudaBackend::Create(plan, **ckpt, o);
    ASSERT_TRUE(c.ok()) << c.status().message();
    const ExecuteResult r = Execute(plan, **c);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    std::vector<uint8_t> got;
    ASSERT_TRUE((*c)->CopyOut(x, got).ok());
    EXPECT_TRUE(got == concat(parts));
    ASSERT_TRUE((*c)->CopyOut(g, got).ok());
    EXPECT_TRUE(got == concat({"model.g.2", "model.g.0", "model.g.1"}));
  }
  for (const std::string& nope : {std::string("model.x.experts.9.w"), std::string()}) {
    LoadPlan bad = plan;
    std::vector<std::string>& listed = *bad.buffers[simulator::Index(raw)].tensors;
    if (nope.empty()) {
      listed.pop_back();  // 7 parts: 64 KiB short
    } else {
      listed.at(3) = nope;
    }
    const uint64_t before = FreeBytes();
    const CudaBackend::CreateResult c = CudaBackend::Create(bad, **ckpt, Small());
    EXPECT_FALSE(c.ok());
    const std::string& m = c.status().message();
    EXPECT_NE(m.find("buffer x.raw (/buffers/x.raw)"), std::string::npos) << m;
    EXPECT_NE(m.find(nope.empty() ? "its 7 listed tensors hold 458752 bytes together, the "
                                    "buffer 524288"
                                  : "listed tensor model.x.experts.9.w is not in the checkpoint"),
              std::string::npos)
        << m;
    EXPECT_EQ(FreeBytes(), before);
  }
  fs::remove_all(dir);
}

TEST_F(CudaBackendTest, ReadErrorStopsTheLoadAndGivesEverythingBack) {
  const std::string dir = dir_ + "-truncated";
  Model broken = MakeModel(dir);
  ASSERT_EQ(broken.error, "");
  const LoadPlan plan = MakePlan();
  for (const SafetensorsFile& f : broken.checkpoint->files())
    fs::resize_file(f.path(), 4096);  // after Open
  const CudaBackend::CreateResult c = CudaBackend::Create(plan, *broken.checkpoint, Small());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ExecuteResult r = Execute(plan, **c);
  EXPECT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("changed since it was opened: it is 4096 bytes now"),
            std::string::npos)
      << r.status.message();
  EXPECT_EQ(r.status.kind(), base::ErrorKind::kIo);
  EXPECT_TRUE(r.cleanup.ok()) << r.cleanup.message();
  EXPECT_EQ((*c)->LiveBytes(), 0u);
  EXPECT_EQ(FreeBytes(), (*c)->Memory().baseline_free);
  fs::remove_all(dir);
}

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Injected read faults (CudaOptions::io_faults) at a sample of chunks: EIO and EOF stop the
// load with one error naming the file, tensor and offset and give everything back; a short
// read with EINTR on every call loads the same bytes as the host backend.
TEST_F(CudaBackendTest, ReadFaultsNameTheFileTensorAndOffsetAndGiveEverythingBack) {
  const LoadPlan plan = MakePlan();
  const Bytes want = HostBytes(plan);
  const Run clean = RunGpu(plan, Small());
  ASSERT_TRUE(clean.exec.status.ok()) << clean.exec.status.message();
  const uint64_t reads = (*clean.created)->Times().chunks;
  ASSERT_GT(reads, 4u);
  const size_t fds = OpenFds();
  for (const uint64_t k : {uint64_t{0}, reads / 3, reads / 2, reads - 1}) {
    SCOPED_TRACE(k);
    for (const IoFaults f : {IoFaults{.eio_at_read = k}, IoFaults{.eof_at_read = k}}) {
      CudaOptions o = Small();
      o.io_faults = f;
      const Run r = RunGpu(plan, o);
      ASSERT_TRUE(r.created.ok()) << r.created.status().message();
      EXPECT_FALSE(r.exec.status.ok());
      const std::string m = ExpectReadFaultGaveBack(
          r, f.eio_at_read ? "read failed: Input/output error" : "the file ended after");
      EXPECT_NE(m.find(" byte offset "), std::string::npos) << m;
      EXPECT_EQ((*r.created)->LiveBytes(), 0u);
    }
    CudaOptions o = Small();
    o.io_faults = {.short_at_read = k, .eintr_every = true};
    const Run r = RunGpu(plan, o);
    ASSERT_TRUE(r.created.ok()) << r.created.status().message();
    ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
    EXPECT_TRUE(GpuBytes(plan, **r.created) == want);
  }
  EXPECT_EQ(OpenFds(), fds);
}

// Direct reads (CudaOptions::direct_io: O_DIRECT, 4 KiB blocks, the chunk's skew inside its
// slot): the host backend's bytes, chunk sizes off the grid included; EIO at a sample of reads
// names the file, tensor and offset and gives everything back; no descriptor left open.
TEST_F(CudaBackendTest, DirectReadsGiveTheHostsBytesAndTheSameErrors) {
  if (!DirectFile::Open(Ckpt().files()[0].Ref()).ok()) GTEST_SKIP() << "no O_DIRECT here";
  const LoadPlan plan = MakePlan();
  const Bytes want = HostBytes(plan);
  const size_t fds = OpenFds();
  for (const uint64_t chunk : {uint64_t{64} << 10, uint64_t{10'000}}) {
    SCOPED_TRACE(chunk);
    const CudaOptions o{.io_threads = 3, .chunk_bytes = chunk, .direct_io = true};
    const Run r = RunGpu(plan, o);
    ASSERT_TRUE(r.created.ok()) << r.created.status().message();
    ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
    EXPECT_TRUE(GpuBytes(plan, **r.created) == want);
    const uint64_t reads = (*r.created)->Times().chunks;
    for (const uint64_t k : {uint64_t{0}, reads / 2}) {
      CudaOptions f = o;
      f.io_faults = {.eio_at_read = k};
      const Run bad = RunGpu(plan, f);
      ASSERT_TRUE(bad.created.ok()) << bad.created.status().message();
      ExpectReadFaultGaveBack(bad, "direct read failed: Input/output error");
    }
  }
  EXPECT_EQ(OpenFds(), fds);
}

// --read-mib: each chunk filled by several preads (the last one shorter), copied once; the
// same bytes, and a read fault in any piece names that piece's tensor offset (on one thread,
// reads go in fill order: every offset named is on the 10,000-byte grid inside its 64 KiB
// chunk, and some are past a chunk's first piece). With direct reads the option is refused.
TEST_F(CudaBackendTest, ChunksReadInPiecesGiveTheHostsBytes) {
  const LoadPlan plan = MakePlan();
  const Bytes want = HostBytes(plan);
  constexpr uint64_t kChunk = 64 << 10, kPiece = 10'000;
  const CudaOptions o{.io_threads = 1, .chunk_bytes = kChunk, .read_bytes = kPiece};
  const Run r = RunGpu(plan, o);
  ASSERT_TRUE(r.created.ok()) << r.created.status().message();
  ASSERT_TRUE(r.exec.status.ok()) << r.exec.status.message();
  EXPECT_TRUE(GpuBytes(plan, **r.created) == want);
  bool past_first_piece = false;
  for (uint64_t k = 1; k <= 48; ++k) {  // 48 reads: past the small tensors into a large one
    CudaOptions f = o;
    f.io_faults = {.eio_at_read = k};
    const Run bad = RunGpu(plan, f);
    ASSERT_TRUE(bad.created.ok()) << bad.created.status().message();
    const std::string m = ExpectReadFaultGaveBack(bad, "read failed: Input/output error");
    const size_t at = m.find(" byte offset ");
    ASSERT_NE(at, std::string::npos) << m;
    const uint64_t offset = std::stoull(m.substr(at + 13));
    EXPECT_EQ(offset % kChunk % kPiece, 0u) << m;
    past_first_piece = past_first_piece || offset % kChunk != 0;
  }
  EXPECT_TRUE(past_first_piece) << "no fault fell past a chunk's first piece";
  const Run refused = RunGpu(
      plan, {.io_threads = 1, .chunk_bytes = kChunk, .read_bytes = kPiece, .direct_io = true});
  EXPECT_FALSE(refused.created.ok());
  EXPECT_NE(refused.created.status().message().find("buffered reads"), std::string::npos)
      << refused.created.status().message();
}

// run --ceilings' "both at once" probe: the reads' bytes are the host-read probe's, whole
// 256 MiB rounds only are counted, and device memory is back where it was.
TEST_F(CudaBackendTest, H2DBesideTheHostReadCountsWholeRoundsAndGivesMemoryBack) {
  const uint64_t before = FreeBytes();
  const base::Result<Throughput> alone = ProbeHostRead(Ckpt(), 3, 64 << 10);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  const base::Result<SharedCeilings> both = ProbeH2DBesideHostRead(Ckpt(), 3, 64 << 10, 4, 0);
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->read.bytes, alone->bytes);
  EXPECT_GT(both->read.gbps(), 0);
  EXPECT_EQ(both->h2d.bytes % (uint64_t{256} << 20), 0u);
  EXPECT_EQ(both->h2d.bytes == 0, both->h2d.seconds == 0);
  EXPECT_EQ(FreeBytes(), before);
}

// On 2 GiB of reads (the file just written: in the page cache) the copier gets many rounds
// wholly inside the reads: the both-at-once rate is measured, and no faster than the copies alone.
TEST_F(CudaBackendTest, H2DBesideAReadOfGigabytesIsMeasured) {
  const std::string path = dir_ + "/probe-2gib.safetensors";
  const std::vector<TensorSpec> t = {{.name = "a", .shape = {uint64_t{1} << 30}},
                                     {.name = "b", .shape = {uint64_t{1} << 30}}};
  ASSERT_TRUE(WriteSafetensors(path, t, {}, [](size_t i, uint64_t, std::span<uint8_t> out) {
                std::fill(out.begin(), out.end(), static_cast<uint8_t>(i + 1));
              }).ok());
  base::Result<std::unique_ptr<Checkpoint>> ck = Checkpoint::Open(path);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  const TensorSet only_a = {"a"};
  const base::Result<Throughput> alone = ProbePinnedH2D(uint64_t{1} << 30, 4, 0);
  const base::Result<SharedCeilings> both = ProbeH2DBesideHostRead(**ck, 3, 4 << 20, 4, 0);
  const base::Result<SharedCeilings> half = ProbeH2DBesideHostRead(**ck, 3, 4 << 20, 4, 0, &only_a);
  fs::remove(path);
  ASSERT_TRUE(alone.ok() && both.ok() && half.ok());
  EXPECT_EQ(both->read.bytes, uint64_t{2} << 30);
  EXPECT_EQ(half->read.bytes, uint64_t{1} << 30);  // the tensor set limits the reads
  EXPECT_GE(both->h2d.bytes, uint64_t{3} << 28) << "fewer than 3 rounds inside 2 GiB of reads";
  EXPECT_LE(both->h2d.gbps(), alone->gbps() * 1.05);
}

}  // namespace
}  // namespace loadplan::backend
