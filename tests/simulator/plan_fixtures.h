// Test fixtures: manifests built directly as structs (no parser, no builder), and a
// RapidCheck generator of small valid derive manifests for planner/checker properties.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "verifier/manifest.h"

namespace loadplan::simulator::testing {

using verifier::BufferKind;
using verifier::Expr;

// Builds a Manifest that verifies: buffers, then calls that read/write buffers by name. Each
// call gets a kernel `k_r<R>_w<W>` whose parameters r00.., w00.. have the needed access.
class ManifestMaker {
 public:
  explicit ManifestMaker(std::string name = "t", uint32_t lanes = 1, uint32_t prefetch = 0) {
    m_.name = std::move(name);
    m_.load = verifier::LoadOptions{.lanes = lanes, .prefetch = prefetch, .ptr = "/load"};
  }
  ManifestMaker& Var(std::string name, int64_t min, int64_t max) {
    m_.vars.push_back({.name = std::move(name), .min = min, .max = max});
    return *this;
  }
  ManifestMaker& Buffer(std::string name, BufferKind kind, std::vector<Expr> shape,
                        base::Dtype dtype = base::Dtype::kU8, std::optional<uint32_t> lane = {}) {
    verifier::Buffer b{
        .name = name, .kind = kind, .dtype = dtype, .shape = std::move(shape), .lane = lane};
    if (verifier::IsCheckpointBound(kind)) b.tensor = "model." + name;
    m_.buffers.push_back(std::move(b));
    return *this;
  }
  ManifestMaker& Bytes(std::string name, BufferKind kind, int64_t bytes,
                       std::optional<uint32_t> lane = {}) {
    return Buffer(std::move(name), kind, {Expr::Const(bytes)}, base::Dtype::kU8, lane);
  }
  // Appends a call to program `prog` (created on first use with the given flags). Each buffer
  // param `r00`.. / `w00`.. touches the whole bound buffer: its extent is the scalar param
  // `r00_n` (elements of the buffer's dtype), which the call sets to the buffer's element count.
  ManifestMaker& Call(const std::string& prog, const std::vector<std::string>& reads,
                      const std::vector<std::string>& writes, bool derive = true,
                      bool once = false) {
    verifier::Program& p = ProgramNamed(prog, derive, once);
    // One kernel per shape of call: k_r<R>_w<W>, with the dtypes appended when a bound buffer
    // is not U8 (a parameter has one dtype, rule P6).
    std::string kernel = fmt::format("k_r{}_w{}", reads.size(), writes.size());
    std::vector<base::Dtype> dtypes;
    for (const auto* names : {&reads, &writes}) {
      for (const std::string& b : *names) dtypes.push_back(DtypeOf(b));
    }
    if (std::any_of(dtypes.begin(), dtypes.end(),
                    [](base::Dtype d) { return d != base::Dtype::kU8; })) {
      for (base::Dtype d : dtypes) kernel += "_" + std::string(base::DtypeName(d));
    }
    verifier::Call c{.kernel = kernel};
    std::vector<std::pair<std::string, std::string>> bound;  // (param, buffer)
    for (size_t i = 0; i < reads.size(); ++i)
      bound.emplace_back(fmt::format("r{:02}", i), reads[i]);
    for (size_t i = 0; i < writes.size(); ++i)
      bound.emplace_back(fmt::format("w{:02}", i), writes[i]);
    for (const auto& [param, buffer] : bound) {
      c.args.push_back({.param = param, .buffer = buffer});
      c.args.push_back({.param = param + "_n", .scalar = ElementsOf(buffer)});
    }
    EnsureKernel(kernel, reads.size(), dtypes);
    c.grid = {Expr::Const(1)};
    p.calls.push_back(std::move(c));
    return *this;
  }
  [[nodiscard]] verifier::Manifest Done() const {
    verifier::Manifest m = m_;
    auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
    std::sort(m.vars.begin(), m.vars.end(), by_name);
    std::sort(m.buffers.begin(), m.buffers.end(), by_name);
    std::sort(m.kernels.begin(), m.kernels.end(), by_name);
    std::sort(m.programs.begin(), m.programs.end(), by_name);
    for (verifier::Kernel& k : m.kernels) std::sort(k.params.begin(), k.params.end(), by_name);
    for (verifier::Program& p : m.programs) {
      for (verifier::Call& c : p.calls) {
        std::sort(c.args.begin(), c.args.end(),
                  [](const auto& a, const auto& b) { return a.param < b.param; });
      }
    }
    verifier::AssignPointers(m);
    return m;
  }

 private:
  verifier::Program& ProgramNamed(const std::string& name, bool derive, bool once) {
    for (verifier::Program& p : m_.programs) {
      if (p.name == name) return p;
    }
    m_.programs.push_back({.name = name, .derive = derive, .once = once});
    return m_.programs.back();
  }
  // `dtypes`: of the read params, then of the write params.
  void EnsureKernel(const std::string& name, size_t reads, const std::vector<base::Dtype>& dtypes) {
    for (const verifier::Kernel& k : m_.kernels) {
      if (k.name == name) return;
    }
    verifier::Kernel k{.name = name};
    auto add = [&](std::string param, verifier::Access access, base::Dtype dtype) {
      k.params.push_back({.name = param + "_n", .access = verifier::Access::kScalar});
      k.params.push_back(
          {.name = param, .access = access, .dtype = dtype, .extent = Expr::Var(param + "_n")});
    };
    for (size_t i = 0; i < dtypes.size(); ++i) {
      const bool read = i < reads;
      add(fmt::format("{}{:02}", read ? "r" : "w", read ? i : i - reads),
          read ? verifier::Access::kRead : verifier::Access::kWrite, dtypes[i]);
    }
    m_.kernels.push_back(std::move(k));
  }
  const verifier::Buffer* Find(const std::string& buffer) const {
    for (const verifier::Buffer& b : m_.buffers) {
      if (b.name == buffer) return &b;
    }
    return nullptr;
  }
  Expr ElementsOf(const std::string& buffer) const {
    const verifier::Buffer* b = Find(buffer);
    return b ? verifier::ElementCount(*b) : Expr::Const(0);
  }
  base::Dtype DtypeOf(const std::string& buffer) const {
    const verifier::Buffer* b = Find(buffer);
    return b ? b->dtype : base::Dtype::kU8;
  }

  verifier::Manifest m_;
};

// A random valid derive manifest: sources (some unread, some pinned to a lane), weights,
// derive programs whose names are a random permutation of their dataflow order (each call
// writes a fresh carry and may read carries of earlier programs), and serve buffers
// over one variable `batch`. Must run inside a RapidCheck property.
inline verifier::Manifest RandomManifest() {
  const auto lanes = *rc::gen::inRange<uint32_t>(1, 5);
  ManifestMaker mk("random", lanes, *rc::gen::inRange<uint32_t>(0, 4));
  mk.Var("batch", 1, *rc::gen::inRange<int64_t>(1, 64));
  const int nsrc = *rc::gen::inRange(1, 14), nw = *rc::gen::inRange(0, 4);
  for (int i = 0; i < nsrc; ++i) {
    const bool pin = *rc::gen::inRange(0, 5) == 0;
    mk.Bytes(fmt::format("s{:02}", i), BufferKind::kSource, *rc::gen::inRange<int64_t>(0, 5000),
             pin ? std::optional<uint32_t>(*rc::gen::inRange<uint32_t>(0, lanes)) : std::nullopt);
  }
  for (int i = 0; i < nw; ++i)
    mk.Bytes(fmt::format("w{}", i), BufferKind::kWeight, *rc::gen::inRange<int64_t>(1, 3000));
  const int nprog = *rc::gen::inRange(1, 6);
  std::vector<int> names(nprog);
  for (int i = 0; i < nprog; ++i) names[i] = i;
  std::shuffle(names.begin(), names.end(), std::mt19937(*rc::gen::inRange(0, 1000)));
  std::vector<std::string> carries;
  for (int p = 0; p < nprog; ++p) {
    const std::string prog = fmt::format("derive.{}", names[p]);
    const size_t visible = carries.size();  // carries of earlier programs
    const int ncalls = *rc::gen::inRange(1, 4);
    for (int c = 0; c < ncalls; ++c) {
      std::vector<std::string> reads;
      for (int k = *rc::gen::inRange(0, 3); k > 0; --k)
        reads.push_back(fmt::format("s{:02}", *rc::gen::inRange(0, nsrc)));
      if (nw > 0 && *rc::gen::inRange(0, 3) == 0)
        reads.push_back(fmt::format("w{}", *rc::gen::inRange(0, nw)));
      if (visible > 0 && *rc::gen::inRange(0, 2) == 0)
        reads.push_back(carries[*rc::gen::inRange<size_t>(0, visible)]);
      std::sort(reads.begin(), reads.end());
      reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
      const std::string carry = fmt::format("c{}.{}", p, c);
      mk.Bytes(carry, BufferKind::kCarry, *rc::gen::inRange<int64_t>(1, 4000));
      mk.Call(prog, reads, {carry});
      carries.push_back(carry);
    }
  }
  mk.Buffer("kv", BufferKind::kState,
            {Expr::Var("batch"), Expr::Const(*rc::gen::inRange<int64_t>(1, 1000))});
  mk.Buffer("tmp", BufferKind::kScratch, {Expr::Var("batch") * Expr::Const(3)});
  mk.Buffer("tokens", BufferKind::kInput, {Expr::Var("batch")}, base::Dtype::kI32);
  mk.Call("init", {"kv"}, {"tmp"}, /*derive=*/false, /*once=*/true);
  return mk.Done();
}

}  // namespace loadplan::simulator::testing
