// Lints (warnings): L1 a weight only derive programs read (finding 3: it should
// be a source), L2 a source nothing reads, L3 a carry nothing reads.
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

// The weight's byte size (its max over the box): what staging it would save.
std::optional<int64_t> MaxBytes(const RuleContext& ctx, const Buffer& b) {
  if (!ctx.SizeOk(b)) return std::nullopt;
  Extrema e = FindExtrema(ByteSize(b), ctx.box, ctx.options.budget);
  if (!e.max) return std::nullopt;
  return e.max->value;
}

void CheckWeight(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  const std::vector<Use>& uses = ctx.UsesOf(b);
  if (uses.empty()) return;
  for (const Use& u : uses) {
    if (!ctx.IsDerive(u) || Writes(u.access)) return;
  }
  std::optional<int64_t> bytes = MaxBytes(ctx, b);
  std::string saves =
      bytes ? fmt::format("saves up to {} bytes of peak", *bytes) : "saves its size at peak";
  sink.Warning(std::string(codes::kWeightOnlyDerive), b.ptr,
               fmt::format("weight `{}` is read only by derive programs: declare it a source: {}",
                           b.name, saves),
               "set \"kind\": \"source\" so it is staged only while derive programs read it");
}

void CheckUnread(const RuleContext& ctx, const Buffer& b, DiagSink& sink) {
  const std::vector<Use>& uses = ctx.UsesOf(b);
  if (b.kind == BufferKind::kSource) {
    if (!uses.empty()) return;  // any use is a derive read or a K2 error
    sink.Warning(
        std::string(codes::kSourceUnread), b.ptr,
        fmt::format("no derive program reads source `{}`: it is loaded for nothing", b.name),
        "remove the source, or read it from a derive program");
    return;
  }
  for (const Use& u : uses) {
    if (Reads(u.access)) return;
  }
  sink.Warning(std::string(codes::kCarryUnread), b.ptr,
               fmt::format("nothing reads carry `{}`", b.name),
               "remove it, read it, or mark it \"export\": true");
}

}  // namespace

void CheckLints(const RuleContext& ctx, DiagSink& sink) {
  for (const Buffer& b : ctx.m.buffers) {
    if (b.malformed || b.exported || ctx.usage.partial.contains(b.name)) continue;
    if (b.kind == BufferKind::kWeight) CheckWeight(ctx, b, sink);
    if (b.kind == BufferKind::kSource || b.kind == BufferKind::kCarry) CheckUnread(ctx, b, sink);
  }
}

}  // namespace loadplan::verifier
