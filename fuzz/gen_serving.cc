// The serving part of a generated manifest: serving buffers over the variables, weights,
// and serving programs whose calls each use a generated kernel. Every buffer parameter p
// of such a kernel has the extent `n_p`, a scalar the call passes exactly the bound
// buffer's element count (or a smaller constant), so bounds hold at every point of the box.
#include <fmt/format.h>
#include <rapidcheck.h>

#include "fuzz/gen_draft.h"

namespace loadplan::fuzz::detail {

using verifier::Access;
using verifier::Arg;
using verifier::Buffer;
using verifier::BufferKind;
using verifier::Call;
using verifier::Expr;
using verifier::Kernel;
using verifier::Param;
using verifier::Program;

namespace {

const std::vector<std::string> kServeStems = {"kv",  "kv.0",  "tokens", "logits", "x",
                                              "x~0", "l0.kv", "a/b",    "w"};
const std::vector<std::string> kProgramStems = {"decode",   "prefill", "serve", "init",
                                                "derive.w", "d",       "a/b"};
const std::vector<std::string> kKernelStems = {"k", "k.0", "rmsnorm", "copy2", "a/b", "attn~1"};

void AddServeBuffers(Draft& d) {
  const int n = *rc::gen::inRange(0, 6);
  for (int i = 0; i < n; ++i) {
    const BufferKind kind =
        *rc::gen::element(BufferKind::kState, BufferKind::kScratch, BufferKind::kInput,
                          BufferKind::kOutput, BufferKind::kPeer, BufferKind::kCarry);
    Buffer b{.name = FreshName(d.names, kServeStems), .kind = kind, .dtype = DrawDtype()};
    // Carries are resident, allocated at their max over the box: keep them small enough for
    // the host backend to allocate (serving-only kinds are not allocated by the plan).
    b.shape = DrawVarShape(d.m, b.dtype, kind == BufferKind::kCarry ? 256 : int64_t{1} << 40);
    b.exported = kind == BufferKind::kCarry || (kind == BufferKind::kOutput && Roll(2) == 0);
    if (kind == BufferKind::kPeer || kind == BufferKind::kState)
      d.collective_targets.push_back(b.name);
    if (kind == BufferKind::kInput || kind == BufferKind::kState) d.serve_reads.push_back(b.name);
    if (kind != BufferKind::kInput && kind != BufferKind::kPeer) d.serve_writes.push_back(b.name);
    d.Add(std::move(b));
  }
  const int weights = *rc::gen::inRange(0, 3);
  for (int i = 0; i < weights; ++i) {
    Buffer w{
        .name = FreshName(d.names, kServeStems), .kind = BufferKind::kWeight, .dtype = DrawDtype()};
    // Whole bytes only: safetensors (and so `gen` and the reader) reject a tensor of 3 F4
    // elements, while the verifier accepts the weight (its byte size rounds up). Reported.
    int64_t count = DrawCount();
    if (base::DtypeBits(w.dtype) % 8 != 0) count = (count + 7) / 8 * 8;
    w.shape = DrawFixedShape(count);
    w.tensor = FreshName(d.tensors, {"model.w", "model.layers.0.w", "lm_head"});
    if (d.m.load.lanes > 1 && Roll(3) == 0) w.lane = *rc::gen::inRange<uint32_t>(0, d.m.load.lanes);
    d.unread.push_back(w.name);
    d.Add(std::move(w));
  }
}

// The scalar passed for a buffer parameter's extent: the element count, or a smaller
// constant for a fixed-size buffer.
Expr ExtentArg(const Draft& d, const Buffer& b) {
  const Expr count = ParseOrDie(verifier::ToString(verifier::ElementCount(b)));
  if (!count.IsConst() || count.value == 0 || Roll(3) != 0) return count;
  (void)d;
  return Expr::Const(*rc::gen::inRange<int64_t>(0, count.value + 1));
}

// One kernel call binding `reads` and `writes`, with its own kernel declaration.
Call KernelCall(Draft& d, const std::vector<std::string>& reads,
                const std::vector<std::string>& writes) {
  Kernel k{.name = FreshName(d.names, kKernelStems)};
  Call c{.kernel = k.name};
  auto bind = [&](const std::string& buffer, Access access) {
    const Buffer& b = *d.Find(buffer);
    const std::string p = fmt::format("b{}", k.params.size() / 2);
    k.params.push_back(
        Param{.name = p, .access = access, .dtype = b.dtype, .extent = Expr::Var("n_" + p)});
    k.params.push_back(Param{.name = "n_" + p, .access = Access::kScalar});
    c.args.push_back(Arg{.param = p, .buffer = buffer});
    c.args.push_back(Arg{.param = "n_" + p, .scalar = ExtentArg(d, b)});
  };
  for (const std::string& r : reads) bind(r, Access::kRead);
  for (const std::string& w : writes) {
    const bool rw = d.Find(w)->kind == BufferKind::kState && Roll(2) == 0;
    bind(w, rw ? Access::kReadWrite : Access::kWrite);
  }
  if (Roll(2) == 0) c.grid = {ParseOrDie(d.m.vars.empty() ? "1" : d.m.vars[0].name)};
  d.m.kernels.push_back(std::move(k));
  return c;
}

Call DrawServingCall(Draft& d) {
  // A collective only when no weight or carry still waits for a reader (the loop in
  // DrawServing needs every kernel call to take one).
  if (!d.collective_targets.empty() && d.unread.empty() && Roll(5) == 0) {
    return Call{.type = verifier::CallType::kCollective,
                .collective = *rc::gen::element<std::string>("all_reduce", "all_gather",
                                                             "reduce_scatter", "broadcast"),
                .buffer = *rc::gen::elementOf(d.collective_targets)};
  }
  std::vector<std::string> reads, writes;
  const int nr = *rc::gen::inRange(0, 3), nw = *rc::gen::inRange(0, 3);
  // Pending readers first: every weight and derive carry ends up read by someone.
  for (int i = 0; i < nr + 1 && !d.unread.empty(); ++i) {
    reads.push_back(d.unread.back());
    d.unread.pop_back();
  }
  for (int i = 0; i < nr && !d.serve_reads.empty(); ++i)
    reads.push_back(*rc::gen::elementOf(d.serve_reads));
  for (int i = 0; i < nw && !d.serve_writes.empty(); ++i)
    writes.push_back(*rc::gen::elementOf(d.serve_writes));
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  std::sort(writes.begin(), writes.end());
  writes.erase(std::unique(writes.begin(), writes.end()), writes.end());
  std::erase_if(
      reads, [&](const std::string& r) { return std::count(writes.begin(), writes.end(), r) > 0; });
  return KernelCall(d, reads, writes);
}

void AddServingProgram(Draft& d) {
  Program p{.name = FreshName(d.names, kProgramStems)};
  p.once = Roll(4) == 0;
  p.graph = Roll(3) == 0;
  if (!d.m.vars.empty() && Roll(2) == 0) p.batch = (*rc::gen::elementOf(d.m.vars)).name;
  const int calls = *rc::gen::inRange(1, 4);
  for (int i = 0; i < calls; ++i) p.calls.push_back(DrawServingCall(d));
  d.m.programs.push_back(std::move(p));
}

}  // namespace

void DrawServing(Draft& d) {
  AddServeBuffers(d);
  const int programs = *rc::gen::inRange(0, 4);
  for (int i = 0; i < programs; ++i) AddServingProgram(d);
  // Carries no serving call read: exported (else lint L3); weights: one more reader.
  std::vector<std::string> weights;
  for (const std::string& name : d.unread) {
    Buffer* b = d.Find(name);
    if (b->kind == BufferKind::kCarry) b->exported = true;
    if (b->kind == BufferKind::kWeight) weights.push_back(name);
  }
  d.unread = weights;
  while (!d.unread.empty()) AddServingProgram(d);
}

}  // namespace loadplan::fuzz::detail
