// The load planner: buffers and their sizes, then drives calls.cc, layout.cc and
// steps.cc.
#include "simulator/planner/planner.h"

#include <algorithm>
#include <optional>

#include "simulator/planner/internal.h"

namespace loadplan::simulator {

std::optional<uint64_t> MaxBufferBytes(const verifier::Buffer& b, const verifier::Box& box) {
  const verifier::Expr bytes = verifier::ByteSize(b);
  if (verifier::IsVariableFree(bytes)) {
    const std::optional<int64_t> r = verifier::ValueAt(bytes, {});
    if (!r || *r < 0) return std::nullopt;
    return static_cast<uint64_t>(*r);
  }
  const verifier::Extrema e = verifier::FindExtrema(bytes, box);
  if (e.max) return static_cast<uint64_t>(std::max<int64_t>(0, e.max->value));
  const std::optional<verifier::Range> r = verifier::IntervalBounds(bytes, box);
  if (r) return static_cast<uint64_t>(std::max<int64_t>(0, r->max));
  return std::nullopt;
}

namespace detail {
namespace {

// The dims of a variable-free shape; nullopt when a dim uses a variable or is negative.
std::optional<std::vector<uint64_t>> FixedShape(const verifier::Buffer& b) {
  std::vector<uint64_t> dims;
  for (const verifier::Expr& d : b.shape) {
    if (!verifier::IsVariableFree(d)) return std::nullopt;
    const std::optional<int64_t> r = verifier::ValueAt(d, {});
    if (!r || *r < 0) return std::nullopt;
    dims.push_back(static_cast<uint64_t>(*r));
  }
  return dims;
}

}  // namespace

std::vector<PlannedBuffer> BuildBuffers(const verifier::Manifest& m, bool naive) {
  const verifier::Box box = m.VarBox();
  std::vector<PlannedBuffer> out;
  out.reserve(m.buffers.size());
  for (const verifier::Buffer& b : m.buffers) {
    const verifier::BufferKind kind =
        naive && b.kind == verifier::BufferKind::kSource ? verifier::BufferKind::kWeight : b.kind;
    PlannedBuffer pb{.id = BufferId{static_cast<uint32_t>(out.size())},
                     .name = b.name,
                     .kind = kind,
                     .residence = ResidenceOf(kind),
                     .dtype = b.dtype,
                     .shape = FixedShape(b)};
    pb.bytes = MaxBufferBytes(b, box).value_or(UINT64_MAX);
    pb.tensor = b.tensor;
    pb.tensors = b.tensors;
    pb.slice = b.slice;
    pb.exported = b.exported;
    if (b.lane) pb.lane = Lane{*b.lane};  // explicit pins; AssignWindowsAndLanes deals the rest
    out.push_back(std::move(pb));
  }
  return out;
}

}  // namespace detail

LoadPlan Plan(const verifier::VerifiedManifest& verified_manifest, const PlanOptions& options) {
  const verifier::Manifest& verified = verified_manifest.manifest();
  LoadPlan plan;
  plan.manifest_name = verified.name;
  plan.lanes = std::max<uint32_t>(1, options.lanes.value_or(verified.load.lanes));
  plan.prefetch =
      options.naive ? kNaivePrefetch : options.prefetch.value_or(verified.load.prefetch);
  plan.alignment = std::max<uint64_t>(1, options.alignment);
  plan.granularity = std::max<uint64_t>(1, options.granularity);
  plan.placement = options.placement;
  plan.naive = options.naive;
  plan.derive_order = verified_manifest.derive_order();
  plan.calls = detail::BuildCalls(verified, plan.derive_order);
  plan.buffers = detail::BuildBuffers(verified, options.naive);
  detail::AssignWindowsAndLanes(plan);
  detail::AssignOffsets(plan, options);
  plan.steps = detail::BuildSteps(plan);
  return plan;
}

}  // namespace loadplan::simulator
