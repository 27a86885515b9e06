// Mutators for the kind rules K1-K11.
#include "fuzz/mutate_rules.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT

namespace {

Buffer& Mut(Manifest& m, const Buffer* b) {
  return m.buffers[static_cast<size_t>(b - m.buffers.data())];
}

}  // namespace

std::optional<Mutation> BindingMissing(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  if (bound.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(bound, pick));
  b.tensor.reset();
  b.tensors.reset();
  return Finish("binding-missing", m, {{"K1", Ptr({"buffers", b.name})}});
}

std::optional<Mutation> BindingExtra(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto other = Buffers(m, {BufferKind::kCarry, BufferKind::kState, BufferKind::kScratch,
                           BufferKind::kInput, BufferKind::kOutput, BufferKind::kPeer});
  if (other.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(other, pick));
  if (pick(2) == 0) {
    b.tensors = std::vector<std::string>{Fresh(m, "model.extra")};
    return Finish("binding-extra", m, {{"K1", Ptr({"buffers", b.name, "tensors"})}});
  }
  b.tensor = Fresh(m, "model.extra");
  return Finish("binding-extra", m, {{"K1", Ptr({"buffers", b.name, "tensor"})}});
}

std::optional<Mutation> SourceWritten(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  if (!EnsureStandardKernel(m, "copy")) return std::nullopt;
  const std::string program = Fresh(m, "derive.k2");
  std::vector<std::string> u8;
  for (const Buffer* b : Buffers(m, {BufferKind::kSource})) {
    if (b->dtype == base::Dtype::kU8 && Count(*b)) u8.push_back(b->name);
  }
  std::string src = u8.empty() ? Fresh(m, "fuzz.raw") : Choose(u8, pick);
  if (u8.empty()) {
    AddBuffer(m, Buffer{.name = src,
                        .kind = BufferKind::kSource,
                        .tensor = Fresh(m, "fuzz.tensor"),
                        .dtype = base::Dtype::kU8,
                        .shape = {Expr::Const(4)}});
  }
  int64_t n = 4;
  for (const Buffer& b : m.buffers) {
    if (b.name == src) n = *Count(b);
  }
  AddProgram(m, Program{.name = program, .derive = true, .calls = {CopyCall(src, src, n)}});
  return Finish("source-written", m,
                {{"K2", Ptr({"programs", program, "calls", "0", "args", "dst"})}});
}

std::optional<Mutation> SourceReadByServing(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto sources = Buffers(m, {BufferKind::kSource});
  if (sources.empty()) return std::nullopt;
  const Buffer b = *Choose(sources, pick);
  const std::string program = Fresh(m, "peek");
  AddOneParamProgram(m, program, b, Access::kRead, Count(b).value_or(0));
  return Finish("source-read-by-serving", m,
                {{"K2", Ptr({"programs", program, "calls", "0", "args", "p"})}});
}

std::optional<Mutation> SourceExported(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto sources = Buffers(m, {BufferKind::kSource});
  if (sources.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(sources, pick));
  b.exported = true;
  return Finish("source-exported", m, {{"K3", Ptr({"buffers", b.name, "export"})}});
}

std::optional<Mutation> WeightWritten(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto weights = Buffers(m, {BufferKind::kWeight});
  if (weights.empty()) return std::nullopt;
  const Buffer b = *Choose(weights, pick);
  const std::string program = Fresh(m, "poke");
  AddOneParamProgram(m, program, b, pick(2) == 0 ? Access::kWrite : Access::kReadWrite,
                     Count(b).value_or(0));
  return Finish("weight-written", m,
                {{"K4", Ptr({"programs", program, "calls", "0", "args", "p"})}});
}

// A checkpoint-bound buffer (or a derive-written carry) whose shape names a variable:
// "<dim> + 0 * v" keeps every size the same, so only K5 changes.
std::optional<Mutation> VariableFixedShape(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  std::vector<const Buffer*> fixed;
  for (const Buffer* b : Buffers(m, {BufferKind::kWeight, BufferKind::kSource})) fixed.push_back(b);
  for (CallRef c : KernelCalls(m, true, true)) {
    const std::string& dst = *FindArg(m.programs[c.program].calls[c.call], "dst")->buffer;
    if (const Buffer* b = m.FindBuffer(dst)) fixed.push_back(b);
  }
  std::erase_if(fixed, [](const Buffer* b) { return b->shape.empty(); });
  if (fixed.empty() || m.vars.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(fixed, pick));
  const size_t i = pick(b.shape.size());
  const std::string text = ToString(b.shape[i]) + " + 0 * " + Choose(m.vars, pick).name;
  b.shape[i] = ParseExpr(text).value();
  return Finish("variable-fixed-shape", m,
                {{"K5", Ptr({"buffers", b.name, "shape", std::to_string(i)})}});
}

// The later of two checkpoint buffers binds one of the earlier's tensors instead of one of its
// own (its `tensor`, or an item of its `tensors`): K6 at that binding.
std::optional<Mutation> TensorTwice(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  std::erase_if(bound, [](const Buffer* b) { return BoundTensors(*b).empty(); });
  if (bound.size() < 2) return std::nullopt;
  size_t i = pick(bound.size()), j = pick(bound.size() - 1);
  if (j >= i) ++j;
  if (i > j) std::swap(i, j);  // buffers are sorted: bound[i] < bound[j] by name
  const std::vector<std::string_view> taken = BoundTensors(*bound[i]);
  const std::string tensor(Choose(taken, pick));
  Buffer& second = Mut(m, bound[j]);
  if (second.tensor) {
    second.tensor = tensor;
    return Finish("tensor-twice", m, {{"K6", Ptr({"buffers", second.name, "tensor"})}});
  }
  const size_t item = pick(second.tensors->size());
  (*second.tensors)[item] = tensor;
  return Finish("tensor-twice", m,
                {{"K6", Ptr({"buffers", second.name, "tensors", std::to_string(item)})}});
}

// A checkpoint buffer with both forms: a fresh list beside its `tensor`, or a fresh `tensor`
// beside its list.
std::optional<Mutation> TensorAndTensors(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  if (bound.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(bound, pick));
  const std::string fresh = Fresh(m, "model.part");
  if (b.tensors) {
    b.tensor = fresh;
  } else {
    b.tensors = std::vector<std::string>{fresh};
  }
  return Finish("tensor-and-tensors", m, {{"K9", Ptr({"buffers", b.name, "tensors"})}});
}

std::optional<Mutation> EmptyTensors(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  if (bound.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(bound, pick));
  b.tensor.reset();
  b.tensors = std::vector<std::string>{};
  return Finish("empty-tensors", m, {{"K10", Ptr({"buffers", b.name, "tensors"})}});
}

// A checkpoint buffer's bindings as a list, one of them listed again at its end.
std::optional<Mutation> ListedTwice(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  std::erase_if(bound, [](const Buffer* b) { return BoundTensors(*b).empty(); });
  if (bound.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(bound, pick));
  const std::vector<std::string_view> names = BoundTensors(b);
  std::vector<std::string> list(names.begin(), names.end());
  list.push_back(list[pick(list.size())]);
  b.tensor.reset();
  b.tensors = std::move(list);
  const std::string last = std::to_string(b.tensors->size() - 1);
  return Finish("listed-twice", m, {{"K11", Ptr({"buffers", b.name, "tensors", last})}});
}

std::optional<Mutation> LaneOnOtherKind(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto other = Buffers(
      m, {BufferKind::kCarry, BufferKind::kState, BufferKind::kScratch, BufferKind::kOutput});
  if (other.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(other, pick));
  b.lane = 0;
  return Finish("lane-on-other-kind", m, {{"K7", Ptr({"buffers", b.name, "lane"})}});
}

std::optional<Mutation> LaneOutOfRange(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  auto bound = Buffers(m, {BufferKind::kWeight, BufferKind::kSource});
  if (bound.empty()) return std::nullopt;
  Buffer& b = Mut(m, Choose(bound, pick));
  b.lane = m.load.lanes + static_cast<uint32_t>(pick(3));
  return Finish("lane-out-of-range", m, {{"K7", Ptr({"buffers", b.name, "lane"})}});
}

// A new F4 or F6 weight whose bits are not whole bytes (an odd F4 count, an F6 count
// that is not a multiple of 4), of one or two dims.
std::optional<Mutation> PartialByte(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  const bool f4 = pick(2) == 0;
  const int64_t unit = f4 ? 2 : 4;  // elements per whole number of bytes
  const int64_t count =
      unit * static_cast<int64_t>(pick(1000)) + 1 + static_cast<int64_t>(pick(unit - 1));
  Buffer b{.name = Fresh(m, "w.partial"),
           .kind = BufferKind::kWeight,
           .tensor = Fresh(m, "model.partial"),
           .dtype = f4 ? base::Dtype::kF4 : base::Dtype::kF6E3M2};
  b.shape = pick(2) == 0 ? std::vector<Expr>{Expr::Const(count)}
                         : std::vector<Expr>{Expr::Const(1), Expr::Const(count)};
  const std::string name = b.name;
  AddBuffer(m, std::move(b));
  return Finish("partial-byte", m, {{"K8", Ptr({"buffers", name, "shape"})}});
}

// A fresh weight binding a list of tensors with a slice beside it (schema 2): K12.
std::optional<Mutation> SliceOfList(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  m.schema = 2;
  Buffer b{.name = Fresh(m, "w.sliced"),
           .kind = BufferKind::kWeight,
           .tensors = std::vector<std::string>{Fresh(m, "model.a"), Fresh(m, "model.b")},
           .slice = verifier::TensorSlice{.dim = 0, .start = pick(4), .length = 2},
           .dtype = base::Dtype::kBF16};
  b.shape = {Expr::Const(2), Expr::Const(8)};
  const std::string name = b.name;
  AddBuffer(m, std::move(b));
  return Finish("slice-of-list", m, {{"K12", Ptr({"buffers", name, "slice"})}});
}

// A fresh weight whose slice is along a dimension it does not have, longer than its extent
// there, or of the right length but past the tensor's `extent` (schema 2): K13 at the key at
// fault.
std::optional<Mutation> SliceOutsideShape(const Manifest& in, const Pick& pick) {
  Manifest m = in;
  m.schema = 2;
  const int64_t rows = 1 + static_cast<int64_t>(pick(64));
  const uint64_t fault = pick(3);  // 0: dim, 1: length, 2: past the extent
  const uint64_t start = fault == 2 ? 1 + pick(8) : pick(8);
  verifier::TensorSlice s{.dim = fault == 0 ? 2 + pick(3) : 0,
                          .start = start,
                          .length = static_cast<uint64_t>(rows) + (fault == 1 ? 1 + pick(8) : 0)};
  if (fault == 2) s.extent = static_cast<uint64_t>(rows) + start - 1;  // one short of the end
  Buffer b{.name = Fresh(m, "w.sliced"),
           .kind = BufferKind::kWeight,
           .tensor = Fresh(m, "model.sliced"),
           .slice = s,
           .dtype = base::Dtype::kBF16};
  b.shape = {Expr::Const(rows), Expr::Const(16)};
  const std::string name = b.name;
  AddBuffer(m, std::move(b));
  const char* key = fault == 0 ? "dim" : fault == 1 ? "length" : "start";
  return Finish("slice-outside-shape", m, {{"K13", Ptr({"buffers", name, "slice", key})}});
}

}  // namespace loadplan::fuzz::mut
