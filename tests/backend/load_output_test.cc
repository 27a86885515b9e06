// SaveDerived under faults (and two host loads at once): a write error (ENOSPC, EIO) at every
// write, a failed copy at every chunk, a folder that refuses the temporary (EACCES), a failed
// rename and a real full device
// (/dev/full) each end in one kIo / kDevice error naming the file, the tensor and the byte
// offset, with no temporary left and a previous derived.safetensors byte for byte as it was.
#include "backend/load_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stop_token>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backend/checkpoint/synthetic.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "examples/examples.h"
#include "simulator/plan_totals.h"
#include "tests/verified_plan.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

// The small gpt-oss example loaded by the host backend: the bytes SaveDerived copies out.
struct Loaded {
  fs::path dir;
  simulator::LoadPlan plan;
  std::unique_ptr<Checkpoint> checkpoint;
  std::unique_ptr<HostBackend> host;
  ~Loaded() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const Loaded& Small() {
  static const std::unique_ptr<Loaded> l = [] {
    auto m = std::make_unique<Loaded>();
    const verifier::BuildResult built = examples::GptOss({.name = "gpt-oss-save",
                                                          .layers = 2,
                                                          .experts = 2,
                                                          .top_k = 1,
                                                          .hidden = 64,
                                                          .intermediate = 64,
                                                          .heads = 2,
                                                          .kv_heads = 1,
                                                          .head_dim = 32,
                                                          .vocab = 128,
                                                          .batch_max = 2,
                                                          .ctx_max = 16});
    EXPECT_TRUE(built.ok());
    m->dir = fs::temp_directory_path() / fmt::format("lp_save_{}", ::getpid());
    EXPECT_TRUE(
        GenerateCheckpoint(built.manifest, {.dir = (m->dir / "ckpt").string(), .seed = 3}).ok());
    m->plan = test_support::PlanOf(built.manifest);
    auto opened = Checkpoint::Open((m->dir / "ckpt").string());
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    m->checkpoint = std::move(*opened);
    m->host = std::make_unique<HostBackend>(m->plan, *m->checkpoint);
    const ExecuteResult r = Execute(m->plan, *m->host);
    EXPECT_TRUE(r.status.ok()) << r.status.message();
    return m;
  }();
  return *l;
}

ReadResident HostRead(const HostBackend& host) {
  return [&host](simulator::BufferId b, uint64_t offset, std::span<uint8_t> out) {
    const std::span<const uint8_t> bytes = host.Bytes(b);
    if (offset + out.size() > bytes.size()) return base::Status::Error("past the end");
    std::copy_n(bytes.begin() + static_cast<ptrdiff_t>(offset), out.size(), out.begin());
    return base::Status::Ok();
  };
}

std::string Contents(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Names in `dir`, so a leftover temporary shows in the failure message.
std::vector<std::string> Names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class SaveDerivedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(simulator::DerivedCarries(Small().plan).empty());
    out_ = Small().dir / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(out_);
    // The previous good file every fault must leave alone.
    base::Result<std::string> first = Save({});
    ASSERT_TRUE(first.ok()) << first.status().message();
    good_ = Contents(*first);
    ASSERT_GT(good_.size(), 8u);
  }
  base::Result<std::string> Save(WriteFaults faults, ReadResident read = {}) const {
    if (!read) read = HostRead(*Small().host);
    return SaveDerived(Small().plan, read, out_.string(),
                       {.chunk_bytes = 4096, .faults = std::move(faults)});
  }
  void ExpectUntouched(const std::string& context) const {
    EXPECT_EQ(Names(out_), std::vector<std::string>{"derived.safetensors"}) << context;
    EXPECT_TRUE(Contents(out_ / "derived.safetensors") == good_) << context;
  }
  fs::path out_;
  std::string good_;
};

TEST_F(SaveDerivedTest, WritesTheHeaderThenEveryCarryAndNoTemporary) {
  const simulator::LoadPlan& plan = Small().plan;
  uint64_t data = 0;
  for (simulator::BufferId i : simulator::DerivedCarries(plan)) data += plan.buffer(i).bytes;
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i) header |= uint64_t{static_cast<uint8_t>(good_[i])} << (8 * i);
  EXPECT_EQ(good_.size(), 8 + header + data);
  const simulator::BufferId first = simulator::DerivedCarries(plan).front();
  const std::span<const uint8_t> bytes = Small().host->Bytes(first);
  ASSERT_GE(good_.size(), 8 + header + bytes.size());
  EXPECT_EQ(std::memcmp(bytes.data(), good_.data() + 8 + header, bytes.size()), 0);
  ExpectUntouched("after a clean save");
}

TEST_F(SaveDerivedTest, AWriteErrorAtEveryWriteLeavesNoTemporaryAndTheOldFile) {
  uint32_t k = 1;
  for (;; ++k) {
    const int error = k % 2 ? ENOSPC : EIO;
    const base::Result<std::string> r = Save({.fail_write = k, .error = error});
    if (r.ok()) break;  // k is past the last write
    const std::string& m = r.status().message();
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kIo) << m;
    EXPECT_NE(m.find(std::strerror(error)), std::string::npos) << m;
    EXPECT_NE(m.find("derived.safetensors"), std::string::npos) << m;
    EXPECT_NE(m.find(k == 1 ? "the header" : "tensor "), std::string::npos) << m;
    EXPECT_NE(m.find(" at byte "), std::string::npos) << m;
    ExpectUntouched(fmt::format("write {}: {}", k, m));
  }
  EXPECT_GT(k, 3u);  // the header and several chunks were each failed once
  EXPECT_TRUE(Contents(out_ / "derived.safetensors") == good_);
}

TEST_F(SaveDerivedTest, AFailedCopyAtEveryChunkLeavesNoTemporaryAndTheOldFile) {
  for (uint32_t k = 1;; ++k) {
    uint32_t calls = 0;
    const ReadResident host = HostRead(*Small().host);
    const base::Result<std::string> r =
        Save({}, [&](simulator::BufferId b, uint64_t offset, std::span<uint8_t> out) {
          return ++calls == k ? base::Status::Error("injected copy fault", base::ErrorKind::kDevice)
                              : host(b, offset, out);
        });
    if (r.ok()) break;
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kDevice) << r.status().message();
    EXPECT_NE(r.status().message().find("injected copy fault"), std::string::npos);
    EXPECT_NE(r.status().message().find("tensor "), std::string::npos);
    ExpectUntouched(fmt::format("copy {}: {}", k, r.status().message()));
  }
}

TEST_F(SaveDerivedTest, AStopMidSaveIsCancelledWithNoTemporaryAndTheOldFile) {
  std::stop_source stop;
  uint32_t calls = 0;
  const ReadResident host = HostRead(*Small().host);
  const base::Result<std::string> r =
      SaveDerived(Small().plan,
                  [&](simulator::BufferId b, uint64_t offset, std::span<uint8_t> out) {
                    if (++calls == 2)
                      stop.request_stop();  // Ctrl-C while the second chunk is copied
                    return host(b, offset, out);
                  },
                  out_.string(), {.chunk_bytes = 4096, .stop = stop.get_token()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kCancelled) << r.status().message();
  EXPECT_EQ(calls, 2u);
  ExpectUntouched(r.status().message());
}

TEST_F(SaveDerivedTest, AFolderThatRefusesTheTemporaryIsEacces) {
  const base::Result<std::string> r = Save({.fail_create = EACCES});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kIo);
  EXPECT_NE(r.status().message().find("Permission denied"), std::string::npos);
  EXPECT_NE(r.status().message().find(".derived.safetensors.tmp-"), std::string::npos);
  ExpectUntouched(r.status().message());
}

TEST_F(SaveDerivedTest, AReadOnlyFolderIsEaccesWithoutTheSeam) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only folder (the seam covers it)";
  ASSERT_EQ(::chmod(out_.c_str(), 0555), 0);
  const base::Result<std::string> r = Save({});
  ASSERT_EQ(::chmod(out_.c_str(), 0755), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Permission denied"), std::string::npos);
  ExpectUntouched(r.status().message());
}

TEST_F(SaveDerivedTest, AFailedRenameLeavesNoTemporaryAndTheOldFile) {
  const base::Result<std::string> r = Save({.fail_rename = EXDEV});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot rename"), std::string::npos);
  ExpectUntouched(r.status().message());
}

TEST_F(SaveDerivedTest, ASinkThatTakesTheBytesIsNeverCommitted) {
  const base::Result<std::string> r = Save({.sink = "/dev/null"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not committed"), std::string::npos);
  ExpectUntouched(r.status().message());
}

TEST_F(SaveDerivedTest, AFullDeviceIsENOSPCFromTheKernel) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const base::Result<std::string> r = Save({.sink = "/dev/full"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("No space left on device"), std::string::npos)
      << r.status().message();
  ExpectUntouched(r.status().message());
}

}  // namespace
}  // namespace loadplan::backend

namespace loadplan::backend {
namespace {

// Two loads at once in one process, on the CPU: two threads each run the host backend over the
// same plan and the same open checkpoint (CompareWithHost), and both match a third load's bytes.
TEST(ConcurrentLoads, TwoHostLoadsAtOnceBothHaveTheRightBytes) {
  const Loaded& l = Small();
  const ReadResident read = HostRead(*l.host);
  for (int round = 0; round < 3; ++round) {
    HostComparison a, b;
    {
      std::jthread ta([&] { a = CompareWithHost(l.plan, *l.checkpoint, read, true); });
      std::jthread tb([&] { b = CompareWithHost(l.plan, *l.checkpoint, read, true); });
    }
    EXPECT_TRUE(a.ok()) << a.host_error << (a.mismatches.empty() ? "" : a.mismatches.front());
    EXPECT_TRUE(b.ok()) << b.host_error << (b.mismatches.empty() ? "" : b.mismatches.front());
    EXPECT_GT(a.compared, 0u);
    EXPECT_EQ(a.bytes, b.bytes);
  }
}

}  // namespace
}  // namespace loadplan::backend
