// The load path under I/O faults, through the host backend: EIO, short reads, EOF and EINTR
// injected at every read call of a small load, files truncated, deleted, replaced or touched
// after Checkpoint::Open. Every fault ends in one error naming the file (and, for reads, the
// tensor and byte offset), host memory back to zero, no descriptor leaked, and a second load
// in the same process that gets the right bytes.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/synthetic.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "examples/examples.h"
#include "tests/verified_plan.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using simulator::LoadPlan;

constexpr uint64_t kChunk = 64;  // bytes per read call: a small load makes many reads

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

const verifier::Manifest& TinyManifest() {
  static const verifier::Manifest m = examples::Tiny().manifest;
  return m;
}

const LoadPlan& TinyPlan() {
  static const LoadPlan p = test_support::PlanOf(TinyManifest());
  return p;
}

// A fresh synthetic checkpoint of the tiny example (one shard), removed at the end.
struct TempCheckpoint {
  fs::path dir;
  explicit TempCheckpoint(const std::string& tag) {
    dir = fs::temp_directory_path() / fmt::format("lp_faults_{}_{}", tag, ::getpid());
    fs::remove_all(dir);
    const base::Result<GenSummary> g =
        GenerateCheckpoint(TinyManifest(), {.dir = dir.string(), .seed = 5});
    EXPECT_TRUE(g.ok()) << g.status().message();
  }
  ~TempCheckpoint() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::unique_ptr<Checkpoint> Open() const {
    auto c = Checkpoint::Open(dir.string());
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : nullptr;
  }
  std::string Shard() const {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".safetensors") return e.path().string();
    }
    return "";
  }
};

using Bytes = std::map<std::string, std::vector<uint8_t>>;

struct Load {
  ExecuteResult result;
  Bytes resident;  // every resident buffer's bytes (weights and carries) when ok
  std::optional<HostFailure> failure;
  uint64_t live = 0;
  uint64_t reads = 0;  // read calls the fault seam counted
};

// A backend that runs `hook` once, right after the first fill: files change mid-load.
class AfterFirstFill final : public Backend {
 public:
  AfterFirstFill(Backend& inner, std::function<void()> hook)
      : inner_(inner), hook_(std::move(hook)) {}
  Status AllocateResident(uint64_t b, const StepContext& at) override {
    return inner_.AllocateResident(b, at);
  }
  Status AllocateArena(uint64_t b, const StepContext& at) override {
    return inner_.AllocateArena(b, at);
  }
  Status Fill(const simulator::PlannedBuffer& b, simulator::Lane l,
              const StepContext& at) override {
    Status st = inner_.Fill(b, l, at);
    if (hook_) std::exchange(hook_, nullptr)();
    return st;
  }
  Status Launch(const simulator::PlannedCall& c, const StepContext& at) override {
    return inner_.Launch(c, at);
  }
  Status Release(const simulator::PlannedBuffer& b, const StepContext& at) override {
    return inner_.Release(b, at);
  }
  Status FreeArena(const StepContext& at) override { return inner_.FreeArena(at); }
  Status Finish() override { return inner_.Finish(); }
  Status FreeResident() override { return inner_.FreeResident(); }
  uint64_t LiveBytes() const override { return inner_.LiveBytes(); }
  uint64_t PeakBytes() const override { return inner_.PeakBytes(); }

 private:
  Backend& inner_;
  std::function<void()> hook_;
};

Load RunLoad(const LoadPlan& plan, const Checkpoint& c, uint64_t chunk, IoFaults faults,
             std::function<void()> mid_load = {}, bool direct = false) {
  HostBackend host(plan, c, {.read_chunk_bytes = chunk, .io_faults = faults, .direct_io = direct});
  AfterFirstFill backend(host, std::move(mid_load));
  Load l{.result = Execute(plan, backend)};
  l.failure = host.LastFailure();
  l.live = host.LiveBytes();
  l.reads = host.ReadCalls();
  if (!l.result.status.ok()) return l;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (b.residence != simulator::Residence::kResident) continue;
    const auto bytes = host.Bytes(b.id);
    l.resident[b.name].assign(bytes.begin(), bytes.end());
  }
  return l;
}

Load RunLoad(const Checkpoint& c, IoFaults faults = {}, std::function<void()> mid_load = {}) {
  return RunLoad(TinyPlan(), c, kChunk, faults, std::move(mid_load));
}

// The bytes a clean load of the tiny checkpoint gives (seed 5: every fresh one is the same).
const Bytes& Reference() {
  static const Bytes b = [] {
    const TempCheckpoint t("reference");
    const Load l = RunLoad(*t.Open());
    EXPECT_TRUE(l.result.status.ok()) << l.result.status.message();
    EXPECT_FALSE(l.resident.empty());
    return l.resident;
  }();
  return b;
}

// A failed load left nothing behind: one kIo error, the memory freed, cleanup ok.
void ExpectCleanFailure(const Load& l, const std::string& what) {
  EXPECT_FALSE(l.result.status.ok()) << what;
  EXPECT_EQ(l.result.status.kind(), base::ErrorKind::kIo) << l.result.status.message();
  EXPECT_TRUE(l.result.cleanup.ok()) << l.result.cleanup.message();
  EXPECT_EQ(l.live, 0u) << what;
  ASSERT_TRUE(l.failure.has_value()) << what;
  EXPECT_EQ(l.failure->code, HostError::kRead) << what;
}

// A second load in the same process, of a fresh checkpoint, gets the right bytes.
void ExpectSecondLoadSucceeds() {
  const TempCheckpoint t("second");
  const Load l = RunLoad(*t.Open());
  ASSERT_TRUE(l.result.status.ok()) << l.result.status.message();
  EXPECT_EQ(l.resident, Reference());
}

// The read error names a tensor of the file it names, a byte offset inside the tensor (a
// chunk start when `at_chunk`: nothing of that read arrived) and the matching file offset.
void ExpectNamesTensorAndOffset(const Checkpoint& c, const std::string& message,
                                bool at_chunk = false, uint64_t chunk = kChunk) {
  static const std::regex re(
      R"(([^ ]+\.safetensors): tensor ([^ :]+): byte offset (\d+) \(file offset (\d+)\): )");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(message, m, re)) << message;
  const Checkpoint::Located at = c.Find(m[2].str());
  ASSERT_NE(at.info, nullptr) << message;
  EXPECT_EQ(at.file->path(), m[1].str());
  const uint64_t offset = std::stoull(m[3].str());
  EXPECT_LT(offset, at.info->bytes()) << message;
  if (at_chunk) {
    EXPECT_EQ(offset % chunk, 0u) << message;
  }
  EXPECT_EQ(std::stoull(m[4].str()), at.file->FileOffset(*at.info) + offset) << message;
}

// Read calls of a clean load (a fault that never fires turns the counter on).
uint64_t CleanReads(const Checkpoint& c) {
  const Load l = RunLoad(c, {.eio_at_read = UINT64_MAX});
  EXPECT_TRUE(l.result.status.ok()) << l.result.status.message();
  return l.reads;
}

TEST(HostFaults, EioAtEveryReadNamesFileTensorAndOffset) {
  const TempCheckpoint t("eio");
  const size_t fds = OpenFds();
  {
    const auto c = t.Open();
    const uint64_t reads = CleanReads(*c);
    ASSERT_GT(reads, 8u);
    const size_t open = OpenFds();
    for (uint64_t k = 0; k < reads; ++k) {
      const Load l = RunLoad(*c, {.eio_at_read = k});
      ExpectCleanFailure(l, fmt::format("eio at {}", k));
      EXPECT_NE(l.result.status.message().find("read failed: Input/output error"),
                std::string::npos)
          << l.result.status.message();
      ExpectNamesTensorAndOffset(*c, l.result.status.message(), /*at_chunk=*/true);
      EXPECT_EQ(OpenFds(), open) << k;
    }
  }
  EXPECT_EQ(OpenFds(), fds);
  ExpectSecondLoadSucceeds();
}

// A small gpt-oss (4 experts, H = 192, I = 160: padded) of `layers` layers, planned, and its
// synthetic checkpoint (seed `seed`) in 100 kB shards under a temporary folder named by `tag`.
struct Sharded {
  LoadPlan plan;
  fs::path dir;
  uint64_t shards = 0;
  std::string error;
};

Sharded ShardedGptOss(const std::string& tag, int layers, uint64_t seed) {
  const verifier::BuildResult built = examples::GptOss({.name = "gpt-oss-small",
                                                        .layers = layers,
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
                                                        .prefetch = 1});
  if (!built.ok()) return {.error = built.errors.front()};
  Sharded out{.plan = test_support::PlanOf(built.manifest),
              .dir = fs::temp_directory_path() / fmt::format("lp_faults_{}_{}", tag, ::getpid())};
  const base::Result<GenSummary> g = GenerateCheckpoint(
      built.manifest, {.dir = out.dir.string(), .seed = seed, .shard_bytes = 100'000});
  if (!g.ok()) return {.error = g.status().message()};
  out.shards = g->shards;
  return out;
}

// A bigger load (two layers of a small gpt-oss, several shards, derive calls): EIO and short
// reads at a sample of read calls, spread over the whole load.
TEST(HostFaults, SampledFaultsOverABiggerShardedLoad) {
  const Sharded sharded = ShardedGptOss("big", 2, 3);
  ASSERT_EQ(sharded.error, "");
  ASSERT_GT(sharded.shards, 1u);
  const LoadPlan& plan = sharded.plan;
  const fs::path& dir = sharded.dir;
  constexpr uint64_t kBigChunk = 4096;
  const size_t fds = OpenFds();
  {
    auto c = Checkpoint::Open(dir.string());
    ASSERT_TRUE(c.ok()) << c.status().message();
    const Load clean = RunLoad(plan, **c, kBigChunk, {.eio_at_read = UINT64_MAX});
    ASSERT_TRUE(clean.result.status.ok()) << clean.result.status.message();
    ASSERT_GT(clean.reads, 100u);
    constexpr uint64_t kSamples = 20;
    for (uint64_t i = 0; i <= kSamples; ++i) {
      const uint64_t k = std::min(clean.reads - 1, i * clean.reads / kSamples);
      const Load eio = RunLoad(plan, **c, kBigChunk, {.eio_at_read = k});
      ExpectCleanFailure(eio, fmt::format("eio at {}", k));
      ExpectNamesTensorAndOffset(**c, eio.result.status.message(), true, kBigChunk);
      const Load ok = RunLoad(plan, **c, kBigChunk, {.short_at_read = k, .eintr_every = true});
      ASSERT_TRUE(ok.result.status.ok()) << k << ": " << ok.result.status.message();
      EXPECT_EQ(ok.resident, clean.resident) << k;
    }
  }
  EXPECT_EQ(OpenFds(), fds);
  fs::remove_all(dir);
  ExpectSecondLoadSucceeds();
}

// Direct reads (HostOptions::direct_io, as the CUDA backend's --direct): the same bytes as
// buffered reads over the sharded load (4 KiB chunks at every offset the tensors have), and
// the faults at a sample of read calls as in buffered mode; no descriptor left open.
TEST(HostFaults, DirectReadsGiveTheSameBytesAndTheSameErrors) {
  const Sharded sharded = ShardedGptOss("direct", 1, 4);
  ASSERT_EQ(sharded.error, "");
  const LoadPlan& plan = sharded.plan;
  const fs::path& dir = sharded.dir;
  constexpr uint64_t kDirectChunk = 10'000;  // not a multiple of the 4 KiB grid
  const size_t fds = OpenFds();
  {
    auto c = Checkpoint::Open(dir.string());
    ASSERT_TRUE(c.ok()) << c.status().message();
    if (!DirectFile::Open((*c)->files()[0].Ref()).ok()) GTEST_SKIP() << "no O_DIRECT here";
    const Load buffered = RunLoad(plan, **c, kDirectChunk, {});
    ASSERT_TRUE(buffered.result.status.ok()) << buffered.result.status.message();
    const Load clean = RunLoad(plan, **c, kDirectChunk, {.eio_at_read = UINT64_MAX}, {}, true);
    ASSERT_TRUE(clean.result.status.ok()) << clean.result.status.message();
    EXPECT_EQ(clean.resident, buffered.resident);
    ASSERT_GT(clean.reads, 20u);
    constexpr uint64_t kSamples = 10;
    for (uint64_t i = 0; i <= kSamples; ++i) {
      const uint64_t k = std::min(clean.reads - 1, i * clean.reads / kSamples);
      const Load eio = RunLoad(plan, **c, kDirectChunk, {.eio_at_read = k}, {}, true);
      ExpectCleanFailure(eio, fmt::format("direct eio at {}", k));
      EXPECT_NE(eio.result.status.message().find("direct read failed: Input/output error"),
                std::string::npos)
          << eio.result.status.message();
      ExpectNamesTensorAndOffset(**c, eio.result.status.message(), true, kDirectChunk);
      const Load ok =
          RunLoad(plan, **c, kDirectChunk, {.short_at_read = k, .eintr_every = true}, {}, true);
      ASSERT_TRUE(ok.result.status.ok()) << k << ": " << ok.result.status.message();
      EXPECT_EQ(ok.resident, buffered.resident) << k;
    }
  }
  EXPECT_EQ(OpenFds(), fds);
  fs::remove_all(dir);
}

TEST(HostFaults, ShortReadAtEveryReadStillLoadsTheRightBytes) {
  const TempCheckpoint t("short");
  const auto c = t.Open();
  const uint64_t reads = CleanReads(*c);
  for (uint64_t k = 0; k < reads; ++k) {
    const Load l = RunLoad(*c, {.short_at_read = k});
    ASSERT_TRUE(l.result.status.ok()) << k << ": " << l.result.status.message();
    EXPECT_EQ(l.reads, reads + 1) << k;  // the rest of the short read took one more call
    EXPECT_EQ(l.resident, Reference()) << k;
  }
}

TEST(HostFaults, EintrOnEveryCallStillLoadsTheRightBytes) {
  const TempCheckpoint t("eintr");
  const auto c = t.Open();
  const Load l = RunLoad(*c, {.eintr_every = true});
  ASSERT_TRUE(l.result.status.ok()) << l.result.status.message();
  EXPECT_EQ(l.reads, CleanReads(*c));
  EXPECT_EQ(l.resident, Reference());
}

// How a truncation between the check and the read looks to the reader: a short read, then
// the end of the file; or the end at once.
TEST(HostFaults, ShortThenEofAtEveryReadSaysTheFileEnded) {
  const TempCheckpoint t("eof");
  const size_t fds = OpenFds();
  {
    const auto c = t.Open();
    const uint64_t reads = CleanReads(*c);
    const uint64_t size = c->files()[0].identity().size;
    for (uint64_t k = 0; k < reads; ++k) {
      for (const IoFaults f :
           {IoFaults{.short_at_read = k, .eof_at_read = k + 1}, IoFaults{.eof_at_read = k}}) {
        const Load l = RunLoad(*c, f);
        ExpectCleanFailure(l, fmt::format("eof at {}", k));
        const std::string& m = l.result.status.message();
        EXPECT_NE(m.find("the file ended after "), std::string::npos) << m;
        EXPECT_NE(m.find(fmt::format("it is {} bytes now, was {} when opened", size, size)),
                  std::string::npos)
            << m;
        ExpectNamesTensorAndOffset(*c, m);
      }
    }
  }
  EXPECT_EQ(OpenFds(), fds);
  ExpectSecondLoadSucceeds();
}

// Truncated (after the header) once the checkpoint is open: the check before the first read.
TEST(HostFaults, TruncatedAfterOpenFailsTheCheckBeforeTheFirstRead) {
  const size_t fds = OpenFds();
  {
    const TempCheckpoint t("trunc");
    const auto c = t.Open();
    const SafetensorsFile& f = c->files()[0];
    const uint64_t data_offset = f.FileOffset(f.tensors()[0]);
    ASSERT_EQ(::truncate(f.path().c_str(), static_cast<off_t>(data_offset + 10)), 0);
    const Load l = RunLoad(*c);
    ExpectCleanFailure(l, "truncated");
    EXPECT_NE(l.result.status.message().find(
                  fmt::format("{}: changed since it was opened: it is {} bytes now, was {}",
                              f.path(), data_offset + 10, f.identity().size)),
              std::string::npos)
        << l.result.status.message();
  }
  EXPECT_EQ(OpenFds(), fds);
  ExpectSecondLoadSucceeds();
}

// Truncated after the check, between two fills: the next read finds the end, never SIGBUS.
TEST(HostFaults, TruncatedDuringTheLoadSaysTheFileEnded) {
  const size_t fds = OpenFds();
  {
    const TempCheckpoint t("trunc_mid");
    const auto c = t.Open();
    const SafetensorsFile& f = c->files()[0];
    const uint64_t data_offset = f.FileOffset(f.tensors()[0]);
    const Load l = RunLoad(*c, {}, [&] {
      ASSERT_EQ(::truncate(f.path().c_str(), static_cast<off_t>(data_offset)), 0);
    });
    ExpectCleanFailure(l, "truncated mid-load");
    const std::string& m = l.result.status.message();
    EXPECT_NE(m.find(fmt::format("the file ended after 0 of")), std::string::npos) << m;
    EXPECT_NE(m.find(fmt::format("it is {} bytes now, was {} when opened", data_offset,
                                 f.identity().size)),
              std::string::npos)
        << m;
    ExpectNamesTensorAndOffset(*c, m);
  }
  EXPECT_EQ(OpenFds(), fds);
  ExpectSecondLoadSucceeds();
}

// Deleted, replaced (rename of another file over it), touched (mtime) or grown: before the
// load (the first check) and during it (the check after the last read).
struct Change {
  const char* name;
  const char* says;
  std::function<void(const std::string& shard)> apply;
};

std::vector<Change> Changes() {
  return {
      {"deleted", "deleted since it was opened",
       [](const std::string& p) { ASSERT_EQ(::unlink(p.c_str()), 0); }},
      {"replaced", "replaced since it was opened",
       [](const std::string& p) {
         fs::copy_file(p, p + ".other");
         ASSERT_EQ(::rename((p + ".other").c_str(), p.c_str()), 0);
       }},
      {"touched", "changed since it was opened: modified at",
       [](const std::string& p) {
         const struct timespec times[2] = {{.tv_sec = 1'000'000'000, .tv_nsec = 0},
                                           {.tv_sec = 1'000'000'000, .tv_nsec = 0}};
         ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
       }},
      {"grown", "changed since it was opened: it is",
       [](const std::string& p) {
         const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
         ASSERT_GE(fd, 0);
         EXPECT_EQ(::write(fd, "x", 1), 1);
         ::close(fd);
       }},
  };
}

TEST(HostFaults, FileChangedUnderneathIsAnErrorNamingTheFile) {
  for (const Change& change : Changes()) {
    for (const bool mid_load : {false, true}) {
      const std::string what = fmt::format("{} {}", change.name, mid_load ? "mid-load" : "before");
      const size_t fds = OpenFds();
      {
        const TempCheckpoint t(change.name);
        const auto c = t.Open();
        const std::string shard = t.Shard();
        if (!mid_load) change.apply(shard);
        const Load l = RunLoad(*c, {},
                               mid_load ? std::function<void()>([&] { change.apply(shard); })
                                        : std::function<void()>());
        ExpectCleanFailure(l, what);
        const std::string& m = l.result.status.message();
        EXPECT_NE(m.find(fmt::format("{}: {}", shard, change.says)), std::string::npos)
            << what << ": " << m;
        EXPECT_EQ(m.find("after the last read") != std::string::npos, mid_load) << m;
      }
      EXPECT_EQ(OpenFds(), fds) << what;
      ExpectSecondLoadSucceeds();
    }
  }
}

}  // namespace
}  // namespace loadplan::backend
