// The derive part of a generated manifest: a random dataflow DAG of real derive kernels
// (copy, cast_bf16_f32) over sources, weights and carries, spread over derive programs.
//
// Acyclic by construction: derive programs are numbered in creation order, and a call
// that reads a carry goes into the carry's producer program (after the producing call)
// or into a later-created one. Program names are drawn independently of that order, so
// the verifier's dataflow order (not name order) is what makes the reads valid.
#include <fmt/format.h>
#include <rapidcheck.h>

#include "builders/kernels.h"
#include "fuzz/gen_draft.h"

namespace loadplan::fuzz::detail {

using base::Dtype;
using verifier::Arg;
using verifier::Buffer;
using verifier::BufferKind;
using verifier::Call;
using verifier::Expr;
using verifier::Program;

namespace {

const std::vector<std::string> kBufferStems = {"w",   "l0.w", "l0.fc1", "l0.fc1_w", "x",
                                               "x~0", "a/b",  "c",      "c.raw"};
const std::vector<std::string> kDeriveStems = {"derive.w", "derive.l0", "d",       "derive",
                                               "z",        "a/b",       "derive~x"};

void EnsureKernel(Draft& d, const std::string& name) {
  if (d.m.FindKernel(name) != nullptr) return;
  for (const verifier::Kernel& k : builders::StandardKernels()) {
    if (k.name == name) d.m.kernels.push_back(k);
  }
  std::sort(d.m.kernels.begin(), d.m.kernels.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  d.names.insert(name);
}

// A `tensors` list of 1 to 3 fresh names whose count divides `count`: `gen` gives each an
// equal 1-D share of the buffer's elements.
std::vector<std::string> DrawParts(Draft& d, int64_t count) {
  std::vector<int64_t> fits;
  for (int64_t k = 1; k <= 3; ++k) {
    if (count % k == 0) fits.push_back(k);
  }
  const int64_t parts = *rc::gen::elementOf(fits);
  std::vector<std::string> out;
  for (int64_t i = 0; i < parts; ++i) {
    out.push_back(FreshName(d.tensors, {"model.layers.0.experts.0.w", "model.e", "t"}));
    d.tensors.insert(out.back());
  }
  return out;
}

// A fresh checkpoint tensor (or a list of them) of `dtype`: a source (only derive reads it) or a
// weight that serving must read too (it is then pending in d.unread).
Readable NewCheckpoint(Draft& d, Dtype dtype) {
  const bool weight = Roll(4) == 0;
  const int64_t count = DrawCount();
  Buffer b{.name = FreshName(d.names, kBufferStems),
           .kind = weight ? BufferKind::kWeight : BufferKind::kSource,
           .dtype = dtype,
           .shape = DrawFixedShape(count)};
  if (Roll(5) == 0) {
    b.tensors = DrawParts(d, count);
  } else {
    b.tensor = Roll(2) == 0 ? b.name : FreshName(d.tensors, {"model.layers.0.w", "model.w", "t"});
    d.tensors.insert(*b.tensor);
  }
  if (d.m.load.lanes > 1 && Roll(4) == 0) b.lane = *rc::gen::inRange<uint32_t>(0, d.m.load.lanes);
  if (dtype == Dtype::kU8 && Roll(4) == 0)
    b.encoding = *rc::gen::element<std::string>("e8m0", "fp4_e2m1x2");
  if (weight) d.unread.push_back(b.name);
  d.Add(std::move(b));
  Readable r{.name = d.m.buffers.back().name, .dtype = dtype, .count = count};
  (dtype == Dtype::kU8 ? d.u8 : d.bf16).push_back(r);
  return r;
}

// The input of the next call: biased to the newest readable (deep chains), else any one
// (fan-out), else a new checkpoint tensor.
Readable PickInput(Draft& d, Dtype dtype) {
  std::vector<Readable>& pool = dtype == Dtype::kU8 ? d.u8 : d.bf16;
  const int choice = pool.empty() ? 2 : *rc::gen::weightedElement<int>({{4, 0}, {3, 1}, {2, 2}});
  if (choice == 0) return pool.back();
  if (choice == 1) return *rc::gen::elementOf(pool);
  return NewCheckpoint(d, dtype);
}

// The program the call goes into: the input's producer or a later one, or a new one.
size_t PickProgram(Draft& d, const Readable& input) {
  const size_t lo = input.producer.value_or(0);
  const size_t n = d.derive_order.size();
  if (lo < n && Roll(3) != 0) return *rc::gen::inRange(lo, n);
  Program p{.name = FreshName(d.names, kDeriveStems), .derive = true};
  d.m.programs.push_back(std::move(p));
  d.derive_order.push_back(d.m.programs.size() - 1);
  return n;
}

std::vector<Expr> DrawGrid() {
  std::vector<Expr> grid = {Expr::Const(*rc::gen::inRange<int64_t>(1, 5))};
  if (Roll(4) == 0) grid.push_back(Expr::Const(*rc::gen::inRange<int64_t>(1, 3)));
  return grid;
}

void AddDeriveCall(Draft& d) {
  const bool cast = Roll(5) == 0;
  const Readable in = PickInput(d, cast ? Dtype::kBF16 : Dtype::kU8);
  const size_t slot = PickProgram(d, in);
  const int64_t count = DrawCount(in.count);
  Buffer out{.name = FreshName(d.names, kBufferStems),
             .kind = BufferKind::kCarry,
             .dtype = cast ? Dtype::kF32 : Dtype::kU8,
             .shape = DrawFixedShape(count)};
  Call c{.kernel = cast ? "cast_bf16_f32" : "copy", .grid = DrawGrid()};
  if (Roll(3) == 0) c.block = {Expr::Const(*rc::gen::element<int64_t>(32, 64, 256))};
  c.args = {Arg{.param = "dst", .buffer = out.name},
            Arg{.param = "n", .scalar = Expr::Const(count)},
            Arg{.param = "src", .buffer = in.name}};
  EnsureKernel(d, c.kernel);
  d.m.programs[d.derive_order[slot]].calls.push_back(std::move(c));
  if (in.producer)
    std::erase(d.unread, in.name);  // a carry is read now; weights still need a serving reader
  d.unread.push_back(out.name);
  d.serve_reads.push_back(out.name);
  if (!cast)
    d.u8.push_back(
        Readable{.name = out.name, .dtype = Dtype::kU8, .count = count, .producer = slot});
  d.Add(std::move(out));
}

}  // namespace

void DrawDerive(Draft& d) {
  const int calls = *rc::gen::weightedElement<int>({{1, 0},
                                                    {4, *rc::gen::inRange(1, 4)},
                                                    {3, *rc::gen::inRange(4, 9)},
                                                    {1, *rc::gen::inRange(9, 25)}});
  for (int i = 0; i < calls; ++i) AddDeriveCall(d);
}

}  // namespace loadplan::fuzz::detail
