// Kind rules K1-K8: checkpoint bindings, how sources and weights may be used,
// fixed shapes where the load needs them, and load lanes.
#include <numeric>
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

void CheckBinding(const Buffer& b, DiagSink& sink) {
  if (IsCheckpointBound(b.kind) && !b.tensor) {
    sink.Error(std::string(codes::kTensorBinding), b.ptr,
               fmt::format("{} `{}` binds no checkpoint tensor", BufferKindName(b.kind), b.name),
               "add \"tensor\": the checkpoint tensor's name");
  } else if (!IsCheckpointBound(b.kind) && b.tensor) {
    sink.Error(std::string(codes::kTensorBinding), ChildPointer(b.ptr, "tensor"),
               fmt::format("{} `{}` binds checkpoint tensor `{}`; only weights and sources do",
                           BufferKindName(b.kind), b.name, *b.tensor),
               "make it a weight or a source, or drop \"tensor\"");
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
  const std::optional<int64_t> n = Evaluate(count, {}).value;
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

void CheckTensorTwice(const RuleContext& ctx, DiagSink& sink) {
  std::vector<const Buffer*> bound;  // checkpoint-bound buffers, in (name) order
  std::vector<std::string_view> tensors;
  for (const Buffer& b : ctx.m.buffers) {
    if (b.malformed || !b.tensor || !IsCheckpointBound(b.kind)) continue;
    bound.push_back(&b);
    tensors.emplace_back(*b.tensor);
  }
  const NameIndex first(std::move(tensors));  // a tensor -> its first binder
  for (size_t i = 0; i < bound.size(); ++i) {
    const Buffer& b = *bound[i];
    const Buffer& a = *bound[first.Find(*b.tensor).value_or(i)];
    if (&a == &b) continue;
    sink.Error(
        std::string(codes::kTensorTwice), ChildPointer(b.ptr, "tensor"),
        fmt::format("checkpoint tensor `{}` is bound by `{}` and `{}`", *b.tensor, a.name, b.name),
        "bind each tensor once; read the one buffer from every call",
        {Note{ChildPointer(a.ptr, "tensor"), "first bound here"}});
  }
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
