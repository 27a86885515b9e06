// The host-backend property: generated manifests run on real bytes with shadow checks.
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "backend/checkpoint/checkpoint.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "backend/memory/memory_backend.h"
#include "backend/checkpoint/synthetic.h"
#include "fuzz/properties.h"
#include "simulator/planner/planner.h"
#include "verifier/usage.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::fuzz {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / fmt::format("lp_fuzz_host_{}_{}", ::getpid(), counter++);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Carries some derive call writes: the host backend must leave them fully written.
std::vector<std::string> DeriveWritten(const verifier::Manifest& m) {
  std::vector<std::string> out;
  const verifier::UsageIndex usage = verifier::BuildUsage(m);
  for (const auto& [name, uses] : usage.by_buffer) {
    for (const verifier::Use& u : uses) {
      if (m.programs[u.program].derive && verifier::Writes(u.access)) {
        out.push_back(name);
        break;
      }
    }
  }
  return out;
}

simulator::PlanOptions DrawHostPlanOptions() {
  simulator::PlanOptions options{.granularity = *rc::gen::element<uint64_t>(1, 256, 4096)};
  if (*rc::gen::inRange(0, 2) == 0) options.lanes = *rc::gen::inRange<uint32_t>(1, 4);
  if (*rc::gen::inRange(0, 2) == 0) options.prefetch = *rc::gen::inRange<uint32_t>(0, 4);
  options.placement =
      *rc::gen::element(simulator::PlacementPolicy::kFirstFit, simulator::PlacementPolicy::kBest);
  return options;
}

void CheckRun(const verifier::Manifest& m, const simulator::LoadPlan& plan,
              const backend::Checkpoint& ckpt) {
  backend::HostBackend host(plan, ckpt);
  const backend::ExecuteResult run = backend::Execute(plan, host);
  if (!run.status.ok())
    RC_FAIL("host: " + run.status.message() + "\n" + verifier::WriteManifest(m));
  backend::MemoryBackend memory;
  RC_ASSERT(backend::Execute(plan, memory).status.ok());
  RC_ASSERT(host.PeakBytes() == memory.PeakBytes());
  RC_ASSERT(host.PeakBytes() <= plan.resident_bytes_rounded + plan.arena_bytes_rounded);
  RC_ASSERT(host.Launches() == plan.calls.size());
  for (const std::string& carry : DeriveWritten(m)) {
    for (const simulator::PlannedBuffer& b : plan.buffers) {
      if (b.name == carry && !host.FullyWritten(b.id))
        RC_FAIL("carry " + carry + " not fully written");
    }
  }
}

}  // namespace

void CheckHostReplay(const verifier::Manifest& m) {
  const verifier::VerifyResult verified = verifier::Verify(m);
  RC_PRE(verified.ok());
  const simulator::LoadPlan plan = simulator::Plan(*verified.verified, DrawHostPlanOptions());
  // Real host memory (twice: bytes and shadow): the generator keeps almost every plan tiny.
  RC_PRE(plan.resident_bytes_rounded + plan.arena_bytes_rounded <= (uint64_t{64} << 20));
  TagShape(m);
  TempDir dir;
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const base::Result<backend::GenSummary> gen =
      backend::GenerateCheckpoint(m, {.dir = dir.path.string(), .seed = seed});
  if (!gen.ok()) RC_FAIL("gen: " + gen.status().message() + "\n" + verifier::WriteManifest(m));
  auto opened = backend::Checkpoint::Open(dir.path.string());
  if (!opened.ok())
    RC_FAIL("open: " + opened.status().message() + "\n" + verifier::WriteManifest(m));
  CheckRun(m, plan, **opened);
}

}  // namespace loadplan::fuzz
