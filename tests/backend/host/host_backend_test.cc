// The host backend on a small gpt-oss-shaped model with a synthetic checkpoint: derived
// carries against the reference kernels run directly, peaks against the simulator, shadow
// errors on hand-broken plans, simulated OOM with cleanup, and every lanes/prefetch/placement.
#include "backend/host/host_backend.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/executor.h"
#include "backend/memory/memory_backend.h"
#include "backend/checkpoint/synthetic.h"
#include "examples/examples.h"
#include "builders/kernels.h"
#include "kernels/reference.h"
#include "simulator/planner/planner.h"
#include "tests/verified_plan.h"
#include "verifier/verify.h"

namespace loadplan::backend {
namespace {

using simulator::BufferId;
using simulator::CallId;
using simulator::Index;
using simulator::LoadPlan;
using simulator::PlannedBuffer;
using simulator::PlanOptions;
using simulator::Residence;
using simulator::StepIndex;
using simulator::StepKind;

// A verified manifest and its synthetic checkpoint in a temp dir (removed at the end).
struct Model {
  verifier::Manifest manifest;
  std::unique_ptr<Checkpoint> checkpoint;
  std::filesystem::path dir;
  ~Model() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

std::unique_ptr<Model> MakeModel(const verifier::BuildResult& built, const std::string& tag) {
  EXPECT_TRUE(built.ok()) << (built.errors.empty() ? "" : built.errors[0]);
  auto m = std::make_unique<Model>();
  m->manifest = built.manifest;
  const verifier::VerifyResult v = verifier::Verify(m->manifest);
  EXPECT_TRUE(v.ok()) << (v.diags.empty() ? "" : v.diags[0].message);
  m->dir = std::filesystem::temp_directory_path() / fmt::format("lp_host_{}_{}", tag, ::getpid());
  const base::Result<GenSummary> g =
      GenerateCheckpoint(m->manifest, {.dir = m->dir.string(), .seed = 11, .shard_bytes = 100'000});
  EXPECT_TRUE(g.ok()) << g.status().message();
  auto opened = Checkpoint::Open(m->dir.string());
  EXPECT_TRUE(opened.ok()) << opened.status().message();
  if (opened.ok()) m->checkpoint = std::move(*opened);
  return m;
}

// 2 layers, 4 experts, H = 192 and I = 160 (both padded to 256: the pad paths run).
const Model& SmallGptOss() {
  static const std::unique_ptr<Model> m = MakeModel(examples::GptOss({.name = "gpt-oss-small",
                                                                      .layers = 2,
                                                                      .experts = 4,
                                                                      .top_k = 2,
                                                                      .hidden = 192,
                                                                      .intermediate = 160,
                                                                      .heads = 4,
                                                                      .kv_heads = 2,
                                                                      .head_dim = 64,
                                                                      .vocab = 1024,
                                                                      .batch_max = 4,
                                                                      .ctx_max = 256,
                                                                      .lanes = 2,
                                                                      .prefetch = 1}),
                                                    "gptoss");
  return *m;
}

using Carries = std::map<std::string, std::vector<uint8_t>>;

// The independent path: every derive call of the manifest on fresh vectors, sources copied
// straight from the checkpoint, in derive-program name order (no carry reads a carry here).
Carries DirectDerive(const Model& model) {
  std::map<std::string, std::vector<uint8_t>> mem;
  for (const verifier::Program& p : model.manifest.programs) {
    if (!p.derive) continue;
    for (const verifier::Call& c : p.calls) {
      kernels::KernelArgs args;
      for (const verifier::Arg& a : c.args) {
        if (a.scalar) args.scalars[a.param] = verifier::ValueAt(*a.scalar, {}).value();
        if (!a.buffer) continue;
        const verifier::Buffer* b = model.manifest.FindBuffer(*a.buffer);
        std::vector<uint8_t>& v = mem[b->name];
        if (v.empty() && b->tensor) {
          const Checkpoint::Located loc = model.checkpoint->Find(*b->tensor);
          const base::Result<std::vector<uint8_t>> data = loc.file->ReadAll(*loc.info);
          EXPECT_TRUE(data.ok()) << data.status().message();
          if (data.ok()) v = *data;
        } else if (v.empty()) {
          v.assign(static_cast<size_t>(verifier::ValueAt(verifier::ByteSize(*b), {}).value()),
                   0xEE);
        }
        args.buffers[a.param] = {.data = v.data(), .bytes = v.size()};
      }
      const kernels::Status s = kernels::RunReference(c.kernel, args);
      EXPECT_TRUE(s.ok()) << p.name << ": " << s.message();
    }
  }
  Carries carries;
  for (const verifier::Buffer& b : model.manifest.buffers) {
    if (b.kind == verifier::BufferKind::kCarry) carries[b.name] = mem[b.name];
  }
  return carries;
}

struct HostRun {
  ExecuteResult result;
  Carries carries;
  uint64_t peak = 0, live = 0;
  std::optional<HostFailure> failure;
};

HostRun RunHost(const LoadPlan& plan, const Checkpoint& checkpoint, HostOptions options = {}) {
  HostBackend host(plan, checkpoint, options);
  HostRun r{.result = Execute(plan, host),
            .peak = host.PeakBytes(),
            .live = host.LiveBytes(),
            .failure = host.LastFailure()};
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (b.kind != verifier::BufferKind::kCarry) continue;
    EXPECT_TRUE(!r.result.status.ok() || host.FullyWritten(b.id)) << b.name;
    const auto bytes = host.Bytes(b.id);
    r.carries[b.name].assign(bytes.begin(), bytes.end());
  }
  return r;
}
HostRun RunHost(const Model& model, const LoadPlan& plan, HostOptions options = {}) {
  return RunHost(plan, *model.checkpoint, options);
}

LoadPlan PlanOf(const Model& model, const simulator::PlanOptions& options = {}) {
  return test_support::PlanOf(model.manifest, options);
}

BufferId Id(const LoadPlan& p, std::string_view name) {
  for (const simulator::PlannedBuffer& b : p.buffers) {
    if (b.name == name) return b.id;
  }
  ADD_FAILURE() << "no buffer " << name;
  return BufferId{0};
}

// The step of `kind` for buffer `buffer` (fills, releases) or call `call` (launches).
size_t StepOf(const LoadPlan& p, StepKind kind, std::optional<BufferId> buffer,
              std::optional<CallId> call = {}) {
  for (size_t s = 0; s < p.steps.size(); ++s) {
    if (p.steps[s].kind == kind && p.steps[s].buffer == buffer && p.steps[s].call == call) return s;
  }
  ADD_FAILURE() << "no such step";
  return 0;
}
std::optional<StepIndex> AtStep(size_t s) { return StepIndex{static_cast<uint32_t>(s)}; }

// Hand edits move steps: drop every wait edge (a sequential backend runs steps in order).
void DropWaits(LoadPlan& p) {
  for (simulator::Step& s : p.steps) s.waits.clear();
}

TEST(HostBackend, SmallGptOssDerivesLikeTheReferenceAndPeaksLikeTheSimulator) {
  const Model& model = SmallGptOss();
  const LoadPlan plan = PlanOf(model);
  ASSERT_GT(plan.calls.size(), 0u);
  const HostRun run = RunHost(model, plan);
  ASSERT_TRUE(run.result.status.ok()) << run.result.status.message();
  const Carries expect = DirectDerive(model);
  ASSERT_EQ(expect.size(), 12u);  // 2 layers x 6 expert tensors
  for (const auto& [name, bytes] : expect) {
    ASSERT_EQ(run.carries.at(name).size(), bytes.size()) << name;
    EXPECT_TRUE(run.carries.at(name) == bytes) << name;
  }
  MemoryBackend memory;
  ASSERT_TRUE(Execute(plan, memory).status.ok());
  EXPECT_EQ(run.peak, memory.PeakBytes());
  EXPECT_EQ(run.peak, plan.resident_bytes_rounded + plan.arena_bytes_rounded);
  EXPECT_EQ(run.live, plan.resident_bytes_rounded);  // the pool stays for the model's life
}

TEST(HostBackend, WeightsAreCopiedFromTheCheckpoint) {
  const Model& model = SmallGptOss();
  const LoadPlan plan = PlanOf(model);
  HostBackend host(plan, *model.checkpoint);
  ASSERT_TRUE(Execute(plan, host).status.ok());
  const BufferId w = Id(plan, "l1.q_w");
  const auto loc = model.checkpoint->Find(*plan.buffer(w).tensor);
  const base::Result<std::vector<uint8_t>> read = loc.file->ReadAll(*loc.info);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const std::vector<uint8_t>& want = *read;
  const auto got = host.Bytes(w);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin()));
  EXPECT_TRUE(host.Bytes(Id(plan, "l0.fc1_w.raw")).empty());  // the arena is gone
}

// A hand-built model out of name order verifies as its sorted self, so its plan is the sorted
// model's, and the backend (which needs only the plan) runs it like any other.
TEST(HostBackend, UnsortedModelPlansAndRunsLikeTheSortedOne) {
  const Model& model = SmallGptOss();
  verifier::Manifest reversed = model.manifest;
  std::reverse(reversed.buffers.begin(), reversed.buffers.end());
  std::reverse(reversed.programs.begin(), reversed.programs.end());
  const LoadPlan plan = test_support::PlanOf(reversed);
  EXPECT_EQ(plan, PlanOf(model));
  const HostRun run = RunHost(model, plan);
  ASSERT_TRUE(run.result.status.ok()) << run.result.status.message();
  EXPECT_EQ(run.carries, DirectDerive(model));
}

TEST(HostBackend, TinyDequantRuns) {
  const auto model = MakeModel(examples::Tiny(), "tiny");
  const LoadPlan plan = PlanOf(*model);
  const HostRun run = RunHost(*model, plan);
  ASSERT_TRUE(run.result.status.ok()) << run.result.status.message();
  EXPECT_EQ(run.carries, DirectDerive(*model));
}

// The dequant-to-BF16 kernels through the verifier, planner and host backend: gpt-oss-style
// experts into transformers' layout, and DeepSeek-style FP8 with partial 128 x 128 blocks.
verifier::BuildResult DequantToBf16Model() {
  using base::Dtype;
  verifier::ManifestBuilder b("dequant-bf16");
  b.Var("batch", 1, 4).Load(1, 0);
  builders::AddStandardKernels(b, {"mxfp4_experts_bf16", "fp8_block_bf16", "lm_head"});
  b.Checkpoint("e.blocks", "mlp.experts.gate_up_proj_blocks", Dtype::kU8, {2, 64, 2, 16},
               {.encoding = "fp4_e2m1x2"});
  b.Checkpoint("e.scales", "mlp.experts.gate_up_proj_scales", Dtype::kU8, {2, 64, 2},
               {.encoding = "e8m0"});
  b.Checkpoint("f.raw", "mlp.gate_proj.weight", Dtype::kF8E4M3, {300, 200});
  b.Checkpoint("f.scale_inv", "mlp.gate_proj.weight_scale_inv", Dtype::kF32, {3, 2});
  b.Carry("e", Dtype::kBF16, {2, 64, 64});
  b.Carry("f", Dtype::kBF16, {300, 200});
  b.Input("x", Dtype::kBF16, {"batch", 200});
  b.Output("le", Dtype::kF32, {"batch", 40}, {.exported = true});
  b.Output("lf", Dtype::kF32, {"batch", 300}, {.exported = true});
  b.AddDerive("derive.e")
      .Call("mxfp4_experts_bf16",
            {{"blocks", "e.blocks"},
             {"scales", "e.scales"},
             {"dst", "e"},
             {"experts", 2},
             {"rows", 64},
             {"cols", 64}},
            {2});
  b.AddDerive("derive.f")
      .Call("fp8_block_bf16",
            {{"src", "f.raw"},
             {"scales", "f.scale_inv"},
             {"dst", "f"},
             {"rows", 300},
             {"cols", 200},
             {"block_rows", 128},
             {"block_cols", 128}},
            {1});
  b.AddProgram("step")
      .Batch("batch")
      .Call("lm_head",
            {{"x", "x"},
             {"weight", "e"},
             {"logits", "le"},
             {"tokens", "batch"},
             {"hidden", 200},
             {"vocab", 40}},
            {"batch"})
      .Call("lm_head",
            {{"x", "x"},
             {"weight", "f"},
             {"logits", "lf"},
             {"tokens", "batch"},
             {"hidden", 200},
             {"vocab", 300}},
            {"batch"});
  return b.Build();
}

TEST(HostBackend, DequantToBf16KernelsRun) {
  const auto model = MakeModel(DequantToBf16Model(), "bf16");
  const HostRun run = RunHost(*model, PlanOf(*model));
  ASSERT_TRUE(run.result.status.ok()) << run.result.status.message();
  const Carries want = DirectDerive(*model);
  EXPECT_EQ(run.carries, want);
  ASSERT_EQ(want.at("e").size(), 2u * 64 * 64 * 2);
  ASSERT_EQ(want.at("f").size(), 300u * 200 * 2);
  EXPECT_TRUE(std::any_of(want.at("f").begin(), want.at("f").end(), [](uint8_t x) { return x; }));
}

// Every staged buffer whose window a test shrinks, moves or breaks: the first call's source.
BufferId FirstSource(const LoadPlan& p) { return p.arrival.at(0); }

TEST(HostBackend, WindowTooShortNamesTheCall) {
  LoadPlan plan = PlanOf(SmallGptOss());
  const BufferId x = FirstSource(plan);
  PlannedBuffer& bx = plan.buffers[Index(x)];
  bx.window_end = simulator::TimeOf(bx.last_reader);  // ends before its last reader
  const HostRun run = RunHost(SmallGptOss(), plan);
  ASSERT_FALSE(run.result.status.ok());
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kWindow);
  EXPECT_EQ(run.failure->call, plan.call(bx.last_reader).ptr);
  EXPECT_EQ(run.failure->buffer, bx.name);
  EXPECT_EQ(run.result.failed_step, AtStep(StepOf(plan, StepKind::kLaunch, {}, bx.last_reader)));
  EXPECT_NE(run.result.status.message().find(plan.call(bx.last_reader).ptr), std::string::npos);
  EXPECT_EQ(run.live, 0u);
}

TEST(HostBackend, ReleaseBeforeTheLastReaderIsCaught) {
  LoadPlan plan = PlanOf(SmallGptOss());
  const BufferId x = FirstSource(plan);
  const CallId reader = plan.buffer(x).last_reader;
  const size_t release = StepOf(plan, StepKind::kRelease, x);
  const size_t launch = StepOf(plan, StepKind::kLaunch, {}, reader);
  ASSERT_LT(launch, release);
  const simulator::Step moved = plan.steps[release];
  plan.steps.erase(plan.steps.begin() + static_cast<std::ptrdiff_t>(release));
  plan.steps.insert(plan.steps.begin() + static_cast<std::ptrdiff_t>(launch), moved);
  DropWaits(plan);
  const HostRun run = RunHost(SmallGptOss(), plan);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kReleased);
  EXPECT_EQ(run.failure->call, plan.call(reader).ptr);
  EXPECT_EQ(run.failure->buffer, plan.buffer(x).name);
  EXPECT_EQ(run.live, 0u);
}

TEST(HostBackend, MissingFillIsAnUnwrittenRead) {
  LoadPlan plan = PlanOf(SmallGptOss());
  const BufferId x = plan.arrival.at(3);
  plan.steps.erase(plan.steps.begin() +
                   static_cast<std::ptrdiff_t>(StepOf(plan, StepKind::kFill, x)));
  DropWaits(plan);
  const HostRun run = RunHost(SmallGptOss(), plan);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kUnwritten);
  EXPECT_EQ(run.failure->call, plan.call(plan.buffer(x).first_reader).ptr);
  EXPECT_EQ(run.failure->buffer, plan.buffer(x).name);
  EXPECT_EQ(run.failure->param, "src");
  EXPECT_EQ(run.failure->offset, 0u);
}

// A placement bug: source b is put on a's bytes while both windows are open. b's fill (a
// prefetch) lands before a's last reader runs, so that reader would read b's bytes as a's.
TEST(HostBackend, OverlappingLiveSourcesAreCaughtAtTheStaleReader) {
  LoadPlan plan = PlanOf(SmallGptOss(), {.lanes = 1, .prefetch = 1});
  std::optional<std::pair<BufferId, BufferId>> pair;
  for (BufferId a : plan.arrival) {
    for (BufferId b : plan.arrival) {
      const auto& pa = plan.buffer(a);
      const auto& pb = plan.buffer(b);
      const size_t fill_a = StepOf(plan, StepKind::kFill, a),
                   fill_b = StepOf(plan, StepKind::kFill, b);
      const size_t read_a = StepOf(plan, StepKind::kLaunch, {}, pa.last_reader);
      if (a != b && pb.bytes <= pa.bytes && fill_a < fill_b && fill_b < read_a && !pair)
        pair = {a, b};
    }
  }
  ASSERT_TRUE(pair) << "no two sources with overlapping windows";
  const auto [a, b] = *pair;
  plan.buffers[Index(b)].offset = plan.buffer(a).offset;
  const HostRun run = RunHost(SmallGptOss(), plan);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kOverwritten);
  EXPECT_EQ(run.failure->buffer, plan.buffer(a).name);
  EXPECT_EQ(run.failure->call, plan.call(plan.buffer(a).last_reader).ptr);
  EXPECT_NE(run.result.status.message().find(plan.buffer(b).name), std::string::npos);
}

TEST(HostBackend, FillChecksTheTensorAndItsSize) {
  const Model& model = SmallGptOss();
  LoadPlan missing = PlanOf(model);
  const BufferId x = FirstSource(missing);
  missing.buffers[Index(x)].tensor = "model.layers.0.nope";
  HostRun run = RunHost(model, missing);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kTensor);  // the preflight's binding check
  EXPECT_EQ(run.result.failed_step, AtStep(0));
  EXPECT_NE(run.result.status.message().find("model.layers.0.nope"), std::string::npos)
      << run.result.status.message();

  LoadPlan smaller = PlanOf(model);
  smaller.buffers[Index(x)].bytes -= 1;
  run = RunHost(model, smaller);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kTensor);
  EXPECT_EQ(run.result.failed_step, AtStep(StepOf(smaller, StepKind::kFill, x)));
  EXPECT_EQ(run.live, 0u);
}

TEST(HostBackend, ExtentPastTheBufferIsCaughtBeforeTheKernelRuns) {
  LoadPlan plan = PlanOf(SmallGptOss());
  const BufferId carry = Id(plan, "l1.fc2_s");
  plan.buffers[Index(carry)].bytes -= 1;
  const HostRun run = RunHost(SmallGptOss(), plan);
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kExtent);
  EXPECT_EQ(run.failure->param, "dst");
  EXPECT_EQ(run.failure->buffer, "l1.fc2_s");
  EXPECT_EQ(run.failure->call, "/programs/derive.l1.fc2_s/calls/0");
}

TEST(HostBackend, OutOfMemoryAtTheArenaSaysAskedAndFreeAndCleansUp) {
  const Model& model = SmallGptOss();
  const LoadPlan plan = PlanOf(model);
  ASSERT_GT(plan.arena_bytes_rounded, 0u);
  const uint64_t limit = plan.resident_bytes_rounded + plan.arena_bytes_rounded - 1;
  const HostRun run = RunHost(model, plan, {.limit = limit});
  ASSERT_FALSE(run.result.status.ok());
  ASSERT_TRUE(run.failure);
  EXPECT_EQ(run.failure->code, HostError::kOutOfMemory);
  EXPECT_EQ(run.failure->buffer, "staging arena");
  EXPECT_EQ(plan.step(run.result.failed_step.value()).kind, StepKind::kAllocArena);
  EXPECT_EQ(run.result.status.kind(), base::ErrorKind::kOutOfMemory);
  const std::string& msg = run.result.status.message();
  EXPECT_NE(msg.find(fmt::format("({} bytes)", plan.arena_bytes_rounded)), std::string::npos)
      << msg;
  EXPECT_NE(msg.find(fmt::format("({} bytes) free", plan.arena_bytes_rounded - 1)),
            std::string::npos)
      << msg;
  EXPECT_TRUE(run.result.cleanup.ok()) << run.result.cleanup.message();
  EXPECT_EQ(run.live, 0u);
  EXPECT_EQ(run.peak, plan.resident_bytes_rounded);
  // One byte more and it fits.
  EXPECT_TRUE(RunHost(model, plan, {.limit = limit + 1}).result.status.ok());
}

TEST(HostBackend, EveryLanesPrefetchPlacementGivesTheSameCarries) {
  const Model& model = SmallGptOss();
  const HostRun base = RunHost(model, PlanOf(model, {.lanes = 1, .prefetch = 0}));
  ASSERT_TRUE(base.result.status.ok()) << base.result.status.message();
  size_t distinct_arenas = 0;
  uint64_t last_arena = 0;
  for (const auto policy :
       {simulator::PlacementPolicy::kFirstFit, simulator::PlacementPolicy::kBestFit}) {
    for (uint32_t lanes : {1u, 2u, 4u}) {
      for (uint32_t prefetch : {0u, 1u, 3u}) {
        SCOPED_TRACE(fmt::format("{} lanes={} prefetch={}", simulator::PlacementPolicyName(policy),
                                 lanes, prefetch));
        const LoadPlan plan =
            PlanOf(model, {.lanes = lanes, .prefetch = prefetch, .placement = policy});
        const HostRun run = RunHost(model, plan);
        ASSERT_TRUE(run.result.status.ok()) << run.result.status.message();
        EXPECT_EQ(run.carries, base.carries);
        EXPECT_EQ(run.peak, plan.resident_bytes_rounded + plan.arena_bytes_rounded);
        distinct_arenas += plan.arena_bytes != last_arena;
        last_arena = plan.arena_bytes;
      }
    }
  }
  EXPECT_GT(distinct_arenas, 1u);  // the plans really differ
}

}  // namespace
}  // namespace loadplan::backend
