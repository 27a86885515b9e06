// Slice rules K12-K15 (schema 2): a buffer's `slice` binds part of its checkpoint tensor along
// one dimension. What needs the checkpoint (the slice inside the tensor's shape) is the load's
// preflight (backend/checkpoint/bindings.cc); these need only the manifest.
#include <optional>
#include <string>

#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

std::string SlicePtr(const Buffer& b) { return ChildPointer(b.ptr, "slice"); }

// K12: a slice belongs to a weight or source with a `tensor` (not a `tensors` list).
bool CheckSliceBinding(const Buffer& b, DiagSink& sink) {
  std::string why;
  if (!IsCheckpointBound(b.kind)) {
    why = fmt::format("{} `{}` has a slice; only weights and sources bind checkpoint bytes",
                      BufferKindName(b.kind), b.name);
  } else if (b.tensors) {
    why = fmt::format("{} `{}` has a slice of a `tensors` list; a slice is of one tensor",
                      BufferKindName(b.kind), b.name);
  } else if (!b.tensor) {
    why = fmt::format("{} `{}` has a slice but binds no `tensor`", BufferKindName(b.kind), b.name);
  }
  if (why.empty()) return true;
  sink.Error(std::string(codes::kSliceBinding), SlicePtr(b), why,
             "give the slice to a weight or source bound by \"tensor\", or drop \"slice\"");
  return false;
}

// The buffer's dimension `d` as a number (K5 reports a variable one).
std::optional<uint64_t> FixedDim(const Buffer& b, size_t d) {
  if (d >= b.shape.size() || !IsVariableFree(b.shape[d])) return std::nullopt;
  const std::optional<int64_t> v = ValueAt(b.shape[d], {});
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

// K13: the slice's dimension is one of the buffer's, inside the tensor's `extent` when it is
// given, and the buffer's extent there is the slice's length (the buffer holds the slice: every
// other dimension is the tensor's, checked at preflight).
bool CheckSliceShape(const Buffer& b, DiagSink& sink) {
  const TensorSlice& s = *b.slice;
  if (s.dim >= b.shape.size()) {
    sink.Error(std::string(codes::kSliceShape), ChildPointer(SlicePtr(b), "dim"),
               fmt::format("slice of `{}` is along dimension {}, but its shape has {} "
                           "dimension{}",
                           b.name, s.dim, b.shape.size(), b.shape.size() == 1 ? "" : "s"),
               fmt::format("use a dimension in [0, {})", b.shape.size()));
    return false;
  }
  if (s.extent && (s.length > *s.extent || s.start > *s.extent - s.length)) {
    sink.Error(std::string(codes::kSliceShape), ChildPointer(SlicePtr(b), "start"),
               fmt::format("slice [{}, {}) of `{}` along dimension {} is outside the tensor's "
                           "extent {} there",
                           s.start, s.start + s.length, b.name, s.dim, *s.extent),
               fmt::format("start + length at most {}, or the tensor's true extent", *s.extent),
               {Note{ChildPointer(SlicePtr(b), "extent"), "the tensor's extent along dim"}});
    return false;
  }
  const std::optional<uint64_t> extent = FixedDim(b, s.dim);
  if (extent && *extent != s.length) {
    sink.Error(std::string(codes::kSliceShape), ChildPointer(SlicePtr(b), "length"),
               fmt::format("slice of `{}` has length {} along dimension {}, but the buffer's "
                           "shape has {} there",
                           b.name, s.length, s.dim, *extent),
               "the buffer's shape is the slice's: make them equal",
               {Note{ChildPointer(ChildPointer(b.ptr, "shape"), s.dim), "the buffer's extent"}});
    return false;
  }
  return extent.has_value();
}

// K14: a sub-byte dtype is sliced on whole bytes (each run starts and ends on a byte), and
// MXFP4 blocks (`encoding` fp4_e2m1x2) along their last dimension on whole 16-byte blocks
// (32 values, one scale each).
void CheckSliceBytes(const Buffer& b, DiagSink& sink) {
  const TensorSlice& s = *b.slice;
  uint64_t inner = 1;  // elements of one index of dimension `dim`
  for (size_t d = s.dim + 1; d < b.shape.size(); ++d) {
    const std::optional<uint64_t> v = FixedDim(b, d);
    if (!v) return;
    inner *= *v;
  }
  const uint32_t bits = base::DtypeBits(b.dtype);
  const bool whole = (s.start * inner * bits) % 8 == 0 && (s.length * inner * bits) % 8 == 0;
  const bool blocks = b.encoding == "fp4_e2m1x2" && s.dim + 1 == b.shape.size();
  if (whole && (!blocks || (s.start % 16 == 0 && s.length % 16 == 0))) return;
  sink.Error(
      std::string(codes::kSliceBytes), SlicePtr(b),
      whole ? fmt::format("slice [{}, +{}) of `{}` splits an MXFP4 block (16 bytes, 32 values "
                          "sharing one scale) along its last dimension",
                          s.start, s.length, b.name)
            : fmt::format("slice [{}, +{}) of `{}` along dimension {} does not start and end on "
                          "whole bytes ({} bits per element, {} element{} per index)",
                          s.start, s.length, b.name, s.dim, bits, inner, inner == 1 ? "" : "s"),
      whole ? "start and length in multiples of 16 bytes, or slice another dimension"
            : "choose a start and length whose bits are multiples of 8");
}

}  // namespace

void CheckSlices(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (b.malformed || !b.slice) continue;
    if (ctx.m.schema < 2) {  // K15
      sink.Error(
          std::string(codes::kSliceSchema), SlicePtr(b),
          fmt::format("`{}` has a slice, which schema {} does not have", b.name, ctx.m.schema),
          "write \"schema\": 2 (slices are schema 2)");
    }
    if (!CheckSliceBinding(b, sink) || !CheckSliceShape(b, sink)) continue;
    CheckSliceBytes(b, sink);
  }
}

}  // namespace loadplan::verifier
