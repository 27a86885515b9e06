// Kind rules K1-K11: checkpoint bindings (one tensor or a list of them), how sources and
// weights may be used, fixed shapes where the load needs them, and load lanes.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

Note DeclaredHere(const Buffer& b) {
  return Note{b.ptr, fmt::format("{} `{}` declared here", BufferKindName(b.kind), b.name)};
}

// K9-K11 on a weight or source's `tensors`: not beside `tensor`, not empty, each tensor once.
void CheckTensorList(const Buffer& b, DiagSink& sink) {
  if (!b.tensors) return;
  const std::string list = ChildPointer(b.ptr, "tensors");
  if (b.tensor) {
    sink.Error(
        std::string(codes::kTensorAndTensors), list,
        fmt::format("{} `{}` has both \"tensor\" and \"tensors\"", BufferKindName(b.kind), b.name),
        "keep one: \"tensor\" binds one checkpoint tensor, \"tensors\" several read one "
        "after another",
        {Note{ChildPointer(b.ptr, "tensor"), "\"tensor\" given here"}});
  }
  if (b.tensors->empty()) {
    sink.Error(std::string(codes::kEmptyTensors), list,
               fmt::format("{} `{}` lists no checkpoint tensor", BufferKindName(b.kind), b.name),
               "list the tensors it reads, or bind one with \"tensor\"");
    return;
  }
  std::map<std::string_view, size_t> first;  // a tensor -> its first item
  for (size_t i = 0; i < b.tensors->size(); ++i) {
    const auto [at, fresh] = first.emplace((*b.tensors)[i], i);
    if (fresh) continue;
    sink.Error(std::string(codes::kListedTwice), ChildPointer(list, i),
               fmt::format("{} `{}` lists checkpoint tensor `{}` twice (items {} and {})",
                           BufferKindName(b.kind), b.name, (*b.tensors)[i], at->second, i),
               "list each tensor once: the buffer would hold its bytes twice",
               {Note{ChildPointer(list, at->second), "first listed here"}});
  }
}

// K1: a weight or source binds `tensor` or `tensors`; no other kind binds either.
void CheckBinding(const Buffer& b, DiagSink& sink) {
  if (IsCheckpointBound(b.kind)) {
    if (!b.tensor && !b.tensors) {
      sink.Error(std::string(codes::kTensorBinding), b.ptr,
                 fmt::format("{} `{}` binds no checkpoint tensor", BufferKindName(b.kind), b.name),
                 "add \"tensor\": the checkpoint tensor's name (or \"tensors\": a list of them)");
    }
    CheckTensorList(b, sink);
    return;
  }
  if (b.tensor) {
    sink.Error(std::string(codes::kTensorBinding), ChildPointer(b.ptr, "tensor"),
               fmt::format("{} `{}` binds checkpoint tensor `{}`; only weights and sources do",
                           BufferKindName(b.kind), b.name, *b.tensor),
               "make it a weight or a source, or drop \"tensor\"");
  }
  if (b.tensors) {
    sink.Error(std::string(codes::kTensorBinding), ChildPointer(b.ptr, "tensors"),
               fmt::format("{} `{}` binds checkpoint tensors; only weights and sources do",
                           BufferKindName(b.kind), b.name),
               "make it a weight or a source, or drop \"tensors\"");
  }
}

// K2 (source written or read outside derive) and K4 (weight written), at each use.
void CheckUses(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  for (const Use& u : ctx.UsesOf(b)) {
    if (u.param.empty() && ctx.IsDerive(u)) continue;  // a derive collective: P3 reports it
    if (b.kind == BufferKind::kSource && Writes(u.access)) {
      sink.Error(std::string(codes::kSourceUse), u.ptr,
                 fmt::format("source `{}` is written by {}; sources are read-only", b.name,
                             ctx.Describe(u)),
                 "write a carry instead, or declare the buffer a carry", {DeclaredHere(b)});
    } else if (b.kind == BufferKind::kSource && !ctx.IsDerive(u)) {
      sink.Error(std::string(codes::kSourceUse), u.ptr,
                 fmt::format("source `{}` is read by {}; sources are read only by derive programs",
                             b.name, ctx.Describe(u)),
                 "read the derived carry instead, or declare the buffer a weight",
                 {DeclaredHere(b)});
    } else if (b.kind == BufferKind::kWeight && Writes(u.access)) {
      sink.Error(std::string(codes::kWeightWritten), u.ptr,
                 fmt::format("weight `{}` is written by {}; weights are read-only", b.name,
                             ctx.Describe(u)),
                 "write a carry instead", {DeclaredHere(b)});
    }
  }
}

// A derive call writes it; a derive collective does not count (P3 reports it, the kind
// rules leave it out).
bool DeriveWritten(const RuleContext& ctx, const Buffer& b) {
  for (const Use& u : ctx.UsesOf(b)) {
    if (ctx.IsDerive(u) && Writes(u.access) && !u.param.empty()) return true;
  }
  return false;
}

void CheckFixedShape(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  if (!ctx.ShapeOk(b)) return;
  bool fixed_kind = IsCheckpointBound(b.kind);
  if (!fixed_kind && !(b.kind == BufferKind::kCarry && DeriveWritten(ctx, b))) return;
  for (size_t i = 0; i < b.shape.size(); ++i) {
    if (IsVariableFree(b.shape[i])) continue;
    std::set<std::string> vars = Variables(b.shape[i]);
    if (vars.empty()) continue;
    std::string why =
        fixed_kind ? "it binds a checkpoint tensor" : "derive programs write it at load";
    sink.Error(
        std::string(codes::kFixedShape), ChildPointer(ChildPointer(b.ptr, "shape"), i),
        fmt::format(
            "{} `{}` has a shape that depends on variable {}; {}, before variables have values",
            BufferKindName(b.kind), b.name, ctx.VarRangeText(*vars.begin()), why),
        "use a constant shape (the variable's max, if it must be sized for it)");
    return;
  }
}

void CheckLane(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  if (!b.lane) return;
  std::string ptr = ChildPointer(b.ptr, "lane");
  if (!IsCheckpointBound(b.kind)) {
    sink.Error(std::string(codes::kLane), ptr,
               fmt::format("{} `{}` has a load lane; only weights and sources are loaded",
                           BufferKindName(b.kind), b.name),
               "drop \"lane\"");
  } else if (!ctx.m.load.lanes_malformed && *b.lane >= ctx.m.load.lanes) {
    sink.Error(std::string(codes::kLane), ptr,
               fmt::format("lane {} of `{}` is out of range: load.lanes is {}", *b.lane, b.name,
                           ctx.m.load.lanes),
               fmt::format("use a lane in [0, {}) or raise load.lanes", ctx.m.load.lanes));
  }
}

// K8: a checkpoint tensor of a sub-byte dtype fills whole bytes; safetensors stores no
// partial byte (3 F4 elements are 12 bits: no checkpoint holds them).
void CheckWholeBytes(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  const uint32_t bits = base::DtypeBits(b.dtype);
  if (!IsCheckpointBound(b.kind) || bits % 8 == 0 || !ctx.SizeOk(b)) return;
  const Expr count = ElementCount(b);
  if (!IsVariableFree(count)) return;  // K5 reports the shape
  const std::optional<int64_t> n = ValueAt(count, {});
  if (!n || *n < 0 || base::FillsWholeBytes(static_cast<uint64_t>(*n), b.dtype)) return;
  sink.Error(
      std::string(codes::kWholeBytes), ChildPointer(b.ptr, "shape"),
      fmt::format("{} `{}` holds {} {} elements of {} bits: not a whole number of bytes, so no "
                  "safetensors checkpoint can store it",
                  BufferKindName(b.kind), b.name, *n, base::DtypeName(b.dtype), bits),
      fmt::format(
          "use an element count whose bits are a multiple of 8 (a multiple of {} {} elements)",
          8 / std::gcd(8U, bits), base::DtypeName(b.dtype)));
}

// One binding of a checkpoint tensor: the buffer, the name, and its item when it is listed.
struct Binding {
  const Buffer* buffer = nullptr;
  std::string_view tensor;
  std::optional<size_t> item;  // nullopt: the buffer's `tensor`

  // Where the name is written (built only for a diagnostic: large manifests bind ~10^5).
  [[nodiscard]] std::string Ptr() const {
    return item ? ChildPointer(ChildPointer(buffer->ptr, "tensors"), *item)
                : ChildPointer(buffer->ptr, "tensor");
  }
};

// Every binding of the well-formed weights and sources: buffers in name order, a list in its
// order.
std::vector<Binding> Bindings(const Manifest& m) {
  std::vector<Binding> out;
  out.reserve(m.buffers.size());
  for (const Buffer& b : m.buffers) {
    if (b.malformed || !IsCheckpointBound(b.kind)) continue;
    if (b.tensor) out.push_back({&b, *b.tensor, std::nullopt});
    if (!b.tensors) continue;
    for (size_t i = 0; i < b.tensors->size(); ++i) out.push_back({&b, (*b.tensors)[i], i});
  }
  return out;
}

// Both bind slices of their tensor along one dimension: whether they overlap is
// CheckSlicesOverlap's question.
bool SlicedAlike(const Binding& a, const Binding& b) {
  return a.buffer->slice && b.buffer->slice && !a.item && !b.item &&
         a.buffer->slice->dim == b.buffer->slice->dim;
}

// K6 for slices of one tensor along one dimension: each range read once (TP ranks' parts of a
// fused weight, a fused q/k/v split into three buffers).
void CheckSlicesOverlap(const std::vector<Binding>& bindings, DiagSink& sink) {
  std::map<std::string_view, std::vector<const Binding*>> sliced;
  for (const Binding& x : bindings) {
    if (x.buffer->slice && !x.item) sliced[x.tensor].push_back(&x);
  }
  for (auto& [tensor, parts] : sliced) {
    std::stable_sort(parts.begin(), parts.end(), [](const Binding* a, const Binding* b) {
      return a->buffer->slice->start < b->buffer->slice->start;
    });
    for (size_t i = 1; i < parts.size(); ++i) {
      const TensorSlice& a = *parts[i - 1]->buffer->slice;
      const TensorSlice& b = *parts[i]->buffer->slice;
      if (a.dim != b.dim || a.start + a.length <= b.start) continue;
      sink.Error(std::string(codes::kTensorTwice), ChildPointer(parts[i]->buffer->ptr, "slice"),
                 fmt::format("slices of checkpoint tensor `{}` overlap: `{}` reads [{}, {}) and "
                             "`{}` [{}, {}) of dimension {}",
                             tensor, parts[i - 1]->buffer->name, a.start, a.start + a.length,
                             parts[i]->buffer->name, b.start, b.start + b.length, b.dim),
                 "bind each element once: make the slices disjoint",
                 {Note{ChildPointer(parts[i - 1]->buffer->ptr, "slice"), "the other slice"}});
    }
  }
}

// K6: a tensor bound by two buffers, once per later binding in another buffer than the first
// (a repeat within one buffer is K11's, or K9's); slices of it along one dimension may share
// it when they do not overlap.
void CheckTensorTwice(const RuleContext& ctx, DiagSink& sink) {
  const std::vector<Binding> bindings = Bindings(ctx.m);
  std::vector<std::string_view> tensors;
  tensors.reserve(bindings.size());
  for (const Binding& x : bindings) tensors.push_back(x.tensor);
  const NameIndex first(std::move(tensors));  // a tensor -> its first binding
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Binding& b = bindings[i];
    const Binding& a = bindings[first.Find(b.tensor).value_or(i)];
    if (a.buffer == b.buffer || SlicedAlike(a, b)) continue;
    sink.Error(std::string(codes::kTensorTwice), b.Ptr(),
               fmt::format("checkpoint tensor `{}` is bound by `{}` and `{}`", b.tensor,
                           a.buffer->name, b.buffer->name),
               "bind each tensor once; read the one buffer from every call",
               {Note{a.Ptr(), "first bound here"}});
  }
  CheckSlicesOverlap(bindings, sink);
}

}  // namespace

void CheckKinds(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (b.malformed) continue;
    CheckBinding(b, sink);
    CheckUses(ctx, b, sink);
    if (b.kind == BufferKind::kSource && b.exported) {
      sink.Error(std::string(codes::kSourceExport), ChildPointer(b.ptr, "export"),
                 fmt::format("source `{}` is exported; it lives only while derive programs read it",
                             b.name),
                 "export the derived carry, or declare the buffer a weight", {});
    }
    CheckFixedShape(ctx, b, sink);
    CheckLane(ctx, b, sink);
    CheckWholeBytes(ctx, b, sink);
  }
  CheckTensorTwice(ctx, sink);
}

}  // namespace loadplan::verifier
