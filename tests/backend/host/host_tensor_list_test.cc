// Buffers bound by a `tensors` list through the host backend: each listed tensor read whole,
// one after another in list order (not file order), from a checkpoint written here with
// known bytes; a listed tensor missing, of another dtype or of sizes that do not sum refused
// by the preflight and by the fill's own check (LocateFill), naming the buffer and the tensor;
// and `gen` + a host run of the same manifest.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend/checkpoint/bindings.h"
#include "backend/checkpoint/file_read.h"
#include "backend/checkpoint/safetensors_write.h"
#include "backend/checkpoint/synthetic.h"
#include "backend/executor.h"
#include "backend/host/host_backend.h"
#include "builders/kernels.h"
#include "tests/verified_plan.h"
#include "verifier/builder.h"
#include "verifier/verify.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using base::Dtype;
using simulator::LoadPlan;
using simulator::PlannedBuffer;

// e.raw: three U8 tensors (50 + 30 + 40 bytes) that a derive call copies into the carry e;
// g: a weight of two BF16 tensors (4 + 8 elements) nothing reads.
verifier::Manifest PartsManifest() {
  verifier::ManifestBuilder b("parts");
  builders::AddStandardKernels(b, {"copy"});
  b.CheckpointParts("e.raw", {"m.e.2", "m.e.0", "m.e.1"}, Dtype::kU8, {3, 40});
  b.Carry("e", Dtype::kU8, {120}, {.exported = true});
  b.CheckpointParts("g", {"m.g.up", "m.g.gate"}, Dtype::kBF16, {2, 6});
  b.AddDerive("derive.e").Call("copy", {{"src", "e.raw"}, {"dst", "e"}, {"n", 120}}, {1});
  const verifier::BuildResult built = b.Build();
  EXPECT_TRUE(built.ok()) << (built.errors.empty() ? "" : built.errors[0]);
  const verifier::VerifyResult v = verifier::Verify(built.manifest);
  EXPECT_TRUE(v.ok()) << (v.diags.empty() ? "" : v.diags[0].message);
  return built.manifest;
}

// One tensor as written: its file (of two shards), dtype, shape and bytes.
struct Written {
  std::string file;
  Dtype dtype = Dtype::kU8;
  std::vector<uint64_t> shape;
  std::vector<uint8_t> bytes;
};
using Tensors = std::map<std::string, Written>;

std::vector<uint8_t> Pattern(uint64_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 37 + i * 11 + 1);
  return v;
}

// The right tensors: shards a and b each hold some of each list, in another order than the
// lists'; shapes differ from the buffers' (only dtype and the byte sum are checked).
Tensors GoodTensors() {
  return {{"m.e.2", {"a", Dtype::kU8, {5, 10}, Pattern(50, 1)}},
          {"m.e.0", {"b", Dtype::kU8, {30}, Pattern(30, 2)}},
          {"m.e.1", {"b", Dtype::kU8, {2, 20}, Pattern(40, 3)}},
          {"m.g.gate", {"a", Dtype::kBF16, {4, 2}, Pattern(16, 4)}},
          {"m.g.up", {"b", Dtype::kBF16, {4}, Pattern(8, 5)}}};
}

// A two-shard checkpoint with its index in a temp dir (removed at the end).
struct TempCheckpoint {
  fs::path dir;
  TempCheckpoint(const Tensors& tensors, const std::string& tag) {
    dir = fs::temp_directory_path() / fmt::format("lp_parts_{}_{}", tag, ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    nlohmann::json index = {{"metadata", nlohmann::json::object()},
                            {"weight_map", nlohmann::json::object()}};
    for (const std::string shard : {"a", "b"}) {
      std::vector<TensorSpec> specs;
      std::vector<const std::vector<uint8_t>*> data;
      for (const auto& [name, t] : tensors) {
        if (t.file != shard) continue;
        specs.push_back({.name = name, .dtype = t.dtype, .shape = t.shape});
        data.push_back(&t.bytes);
        index["weight_map"][name] = shard + ".safetensors";
      }
      const auto fill = [&](size_t i, uint64_t off, std::span<uint8_t> out) {
        std::copy_n(data[i]->begin() + static_cast<std::ptrdiff_t>(off), out.size(), out.begin());
      };
      EXPECT_TRUE(
          WriteSafetensors((dir / (shard + ".safetensors")).string(), specs, {}, fill).ok());
    }
    std::ofstream((dir / "model.safetensors.index.json").string()) << index.dump();
  }
  ~TempCheckpoint() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  [[nodiscard]] std::unique_ptr<Checkpoint> Open() const {
    auto c = Checkpoint::Open(dir.string());
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : nullptr;
  }
};

std::vector<uint8_t> Concat(const Tensors& t, const std::vector<std::string>& names) {
  std::vector<uint8_t> out;
  for (const std::string& n : names)
    out.insert(out.end(), t.at(n).bytes.begin(), t.at(n).bytes.end());
  return out;
}

const PlannedBuffer& Buffer(const LoadPlan& p, std::string_view name) {
  const auto it = std::find_if(p.buffers.begin(), p.buffers.end(),
                               [&](const PlannedBuffer& b) { return b.name == name; });
  EXPECT_NE(it, p.buffers.end()) << name;
  return *it;
}

std::vector<uint8_t> BytesOf(const HostBackend& host, const LoadPlan& p, std::string_view name) {
  const auto bytes = host.Bytes(Buffer(p, name).id);
  return {bytes.begin(), bytes.end()};
}

TEST(HostTensorList, EachListedTensorIsReadWholeInListOrder) {
  const verifier::Manifest m = PartsManifest();
  const LoadPlan plan = test_support::PlanOf(m);
  ASSERT_EQ(Buffer(plan, "e.raw").tensors, (std::vector<std::string>{"m.e.2", "m.e.0", "m.e.1"}));
  const Tensors tensors = GoodTensors();
  const TempCheckpoint dir(tensors, "good");
  const auto ckpt = dir.Open();
  ASSERT_TRUE(ckpt);
  // Chunks of 7 bytes split every tensor; direct reads take the O_DIRECT path where it exists.
  for (const HostOptions& o : {HostOptions{}, HostOptions{.read_chunk_bytes = 7},
                               HostOptions{.read_chunk_bytes = 7, .direct_io = true}}) {
    if (o.direct_io && !DirectFile::Open(ckpt->files()[0].Ref()).ok()) continue;
    HostBackend host(plan, *ckpt, o);
    const ExecuteResult r = Execute(plan, host);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(BytesOf(host, plan, "e"), Concat(tensors, {"m.e.2", "m.e.0", "m.e.1"}));
    EXPECT_EQ(BytesOf(host, plan, "g"), Concat(tensors, {"m.g.up", "m.g.gate"}));
    EXPECT_TRUE(host.FullyWritten(Buffer(plan, "g").id));
  }
}

// Each way a checkpoint can disagree with a list: the preflight refuses the load before any
// allocation, and the fill's own check (LocateFill) refuses the buffer; both name the tensor.
TEST(HostTensorList, MissingWrongDtypeAndWrongSizesAreRefusedNamingTheTensor) {
  struct Case {
    std::string what;
    Tensors tensors;
    std::string buffer, tensor, preflight, fill;  // what the two messages must say
  };
  std::vector<Case> cases;
  cases.push_back({"missing", GoodTensors(), "e.raw", "m.e.0",
                   "listed tensor m.e.0 is not in the checkpoint",
                   "tensor m.e.0 is not in the checkpoint"});
  cases.back().tensors.erase("m.e.0");
  cases.push_back({"dtype", GoodTensors(), "g", "m.g.gate", "listed tensor m.g.gate has dtype F16",
                   "tensor m.g.gate has dtype F16"});
  cases.back().tensors.at("m.g.gate").dtype = Dtype::kF16;
  cases.push_back({"sizes", GoodTensors(), "e.raw", "m.e.2",
                   "its 3 listed tensors hold 121 bytes together, the buffer 120",
                   "hold 121 bytes together, the plan's buffer has 120"});
  cases.back().tensors.at("m.e.1") = {"b", Dtype::kU8, {41}, Pattern(41, 3)};
  const LoadPlan plan = test_support::PlanOf(PartsManifest());
  for (const Case& c : cases) {
    const TempCheckpoint dir(c.tensors, c.what);
    const auto ckpt = dir.Open();
    ASSERT_TRUE(ckpt) << c.what;
    HostBackend host(plan, *ckpt);
    const ExecuteResult r = Execute(plan, host);
    ASSERT_FALSE(r.status.ok()) << c.what;
    EXPECT_EQ(r.failed_step, simulator::StepIndex{0}) << c.what;  // before a byte moves
    EXPECT_EQ(host.PeakBytes(), 0u) << c.what;
    ASSERT_TRUE(host.LastFailure()) << c.what;
    EXPECT_EQ(host.LastFailure()->code, HostError::kTensor) << c.what;
    const std::string& msg = r.status.message();
    EXPECT_NE(msg.find(fmt::format("buffer {} (/buffers/{})", c.buffer, c.buffer)),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(c.preflight), std::string::npos) << msg;

    const base::Result<std::vector<FillPart>> fill = LocateFill(Buffer(plan, c.buffer), *ckpt);
    ASSERT_FALSE(fill.ok()) << c.what;
    EXPECT_NE(fill.status().message().find(c.fill), std::string::npos) << fill.status().message();
    EXPECT_NE(fill.status().message().find(c.tensor), std::string::npos) << fill.status().message();
  }
}

TEST(HostTensorList, LocateFillGivesThePartsInListOrder) {
  const TempCheckpoint dir(GoodTensors(), "locate");
  const auto ckpt = dir.Open();
  ASSERT_TRUE(ckpt);
  const LoadPlan plan = test_support::PlanOf(PartsManifest());
  const base::Result<std::vector<FillPart>> parts = LocateFill(Buffer(plan, "e.raw"), *ckpt);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  std::vector<std::string> names;
  for (const FillPart& p : *parts) {
    names.push_back(p.at.info->name);
    EXPECT_EQ(p.runs, (base::SliceRuns{.run_bytes = p.at.info->bytes(), .count = 1}));  // whole
  }
  EXPECT_EQ(names, (std::vector<std::string>{"m.e.2", "m.e.0", "m.e.1"}));
  EXPECT_FALSE(LocateFill(Buffer(plan, "e"), *ckpt).ok());  // a carry binds no tensor
}

// `gen` writes each listed tensor (the buffer's dtype, an equal 1-D share of its elements);
// the host backend then loads them back whole, in list order.
TEST(HostTensorList, GenThenHostRun) {
  const verifier::Manifest m = PartsManifest();
  const fs::path dir = fs::temp_directory_path() / fmt::format("lp_parts_gen_{}", ::getpid());
  fs::remove_all(dir);
  const base::Result<GenSummary> g =
      GenerateCheckpoint(m, {.dir = dir.string(), .seed = 3, .shard_bytes = 64});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensors, 5u);
  EXPECT_GT(g->shards, 1u);  // the parts spread over shards
  auto ckpt = Checkpoint::Open(dir.string());
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().message();
  const auto expect = [&](const std::vector<std::string>& names) {
    std::vector<uint8_t> out;
    for (const std::string& n : names) {
      const Checkpoint::Located loc = (*ckpt)->Find(n);
      EXPECT_TRUE(loc.info) << n;
      if (!loc.info) continue;
      EXPECT_EQ(loc.info->shape, (std::vector<uint64_t>{n.starts_with("m.e") ? 40u : 6u})) << n;
      const base::Result<std::vector<uint8_t>> bytes = loc.file->ReadAll(*loc.info);
      EXPECT_TRUE(bytes.ok()) << n;
      if (bytes.ok()) out.insert(out.end(), bytes->begin(), bytes->end());
    }
    return out;
  };
  const LoadPlan plan = test_support::PlanOf(m);
  HostBackend host(plan, **ckpt);
  const ExecuteResult r = Execute(plan, host);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(BytesOf(host, plan, "e"), expect({"m.e.2", "m.e.0", "m.e.1"}));
  EXPECT_EQ(BytesOf(host, plan, "g"), expect({"m.g.up", "m.g.gate"}));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace loadplan::backend
