// Dataflow rules over derive programs (finding 2): D1 cycles, D2 reads with no
// earlier derive producer, D3 two derive writers, D4 writes that do not cover
// their carry, D5 reads past the prefix the producer wrote.
#include <fmt/format.h>

#include "verifier/codes.h"
#include "verifier/rules/rules.h"

namespace loadplan::verifier {
namespace {

// The uses of one carry by derive calls, split into writers and readers.
struct CarryFlow {
  const Buffer* carry = nullptr;
  std::vector<const Use*> writers;  // derive uses that write (one per call)
  std::vector<const Use*> readers;  // derive uses that read
  std::vector<const Use*> others;   // writes by serving programs (for notes)
};

CarryFlow FlowOf(const RuleContext& ctx, const Buffer& b) {
  CarryFlow f;
  f.carry = &b;
  for (const Use& u : ctx.UsesOf(b)) {
    bool derive = ctx.IsDerive(u);
    if (derive && u.param.empty()) continue;  // a derive collective: P3 reports it
    if (derive && Writes(u.access)) {
      bool same_call = !f.writers.empty() && f.writers.back()->program == u.program &&
                       f.writers.back()->call == u.call;
      if (!same_call) f.writers.push_back(&u);
    }
    if (derive && Reads(u.access)) f.readers.push_back(&u);
    if (!derive && Writes(u.access)) f.others.push_back(&u);
  }
  return f;
}

bool Before(const RuleContext& ctx, const Use& w, const Use& r) {
  auto a = ctx.PlanPos(w), b = ctx.PlanPos(r);
  return a && b && *a < *b;
}

void CheckCycle(const RuleContext& ctx, const std::vector<CarryFlow>& flows, DiagSink& sink) {
  const std::vector<std::string>& cycle = ctx.derive.cycle;
  if (cycle.empty()) return;
  std::vector<Note> notes;
  for (size_t i = 0; i + 1 < cycle.size(); ++i) {  // edge cycle[i] -> cycle[i+1]
    for (const CarryFlow& f : flows) {
      const Use* hit = nullptr;
      for (const Use* r : f.readers) {
        if (ctx.ProgramOf(*r).name != cycle[i + 1]) continue;
        for (const Use* w : f.writers) {
          if (ctx.ProgramOf(*w).name == cycle[i]) hit = r;
        }
      }
      if (hit == nullptr) continue;
      notes.push_back(Note{hit->ptr, fmt::format("`{}` reads carry `{}` written by `{}`",
                                                 cycle[i + 1], f.carry->name, cycle[i])});
      break;
    }
  }
  std::string path;
  for (const std::string& n : cycle) path += (path.empty() ? "" : " -> ") + n;
  sink.Error(std::string(codes::kCycle), ctx.m.FindProgram(cycle.front())->ptr,
             fmt::format("derive programs form a cycle: {}", path),
             "break the cycle: each carry needs a producer that runs before its readers",
             std::move(notes));
}

void CheckOrphanReads(const RuleContext& ctx, const CarryFlow& f, DiagSink& sink) {
  if (ctx.usage.partial.contains(f.carry->name)) return;  // a broken call may be its writer
  bool ordered = ctx.derive.cycle.empty();
  for (const Use* r : f.readers) {
    bool earlier = false;
    for (const Use* w : f.writers) earlier = earlier || Before(ctx, *w, *r);
    if (earlier || (!ordered && !f.writers.empty())) continue;
    std::vector<Note> notes;
    for (const Use* w : f.writers)
      notes.push_back({w->ptr, "written later here, by " + ctx.Describe(*w)});
    for (const Use* w : f.others) notes.push_back({w->ptr, "written here, by " + ctx.Describe(*w)});
    std::string who =
        f.writers.empty()
            ? (f.others.empty() ? "nothing writes it" : "only serving or once programs write it")
            : "its derive writer runs later";
    sink.Error(
        std::string(codes::kOrphanRead), r->ptr,
        fmt::format("{} reads carry `{}`, which no earlier derive call writes ({}): it would "
                    "read uninitialized memory",
                    ctx.Describe(*r), f.carry->name, who),
        "derive the carry first, in a derive program the reader runs after", std::move(notes));
  }
}

void CheckTwoWriters(const RuleContext& ctx, const CarryFlow& f, DiagSink& sink) {
  if (f.writers.size() < 2) return;
  std::vector<Note> notes;
  for (size_t i = 0; i < f.writers.size(); ++i) {
    if (i != 1)
      notes.push_back({f.writers[i]->ptr, "also written here, by " + ctx.Describe(*f.writers[i])});
  }
  sink.Error(std::string(codes::kTwoWriters), f.writers[1]->ptr,
             fmt::format("carry `{}` has {} derive writer calls; a derived carry has exactly one",
                         f.carry->name, f.writers.size()),
             "write the carry in one derive call", std::move(notes));
}

// A usable extent: known, over well-formed variables, and (derive values) constant.
bool FixedExtent(const RuleContext& ctx, const Use& u) {
  return u.extent && ctx.ExprOk(*u.extent) && IsVariableFree(*u.extent);
}

void CheckCoverage(const RuleContext& ctx, const CarryFlow& f, DiagSink& sink) {
  if (f.writers.size() != 1 || !ctx.SizeOk(*f.carry)) return;
  const Use& w = *f.writers.front();
  Expr count = ElementCount(*f.carry);
  if (!FixedExtent(ctx, w) || !IsVariableFree(count)) return;  // K5 / P4 report the cause
  const Proof& p = ctx.LessEq(count, *w.extent);
  if (p.truth == Truth::kTrue) return;
  if (p.truth == Truth::kUnknown) {
    sink.Error(
        std::string(codes::kUnproved), w.ptr,
        fmt::format("could not prove that {} covers carry `{}`", ctx.Describe(w), f.carry->name));
    return;
  }
  sink.Error(
      std::string(codes::kUncovered), w.ptr,
      fmt::format("{} writes {} of carry `{}`'s {} elements; the rest stays uninitialized",
                  ctx.Describe(w), p.rhs_at.value_or(0), f.carry->name, p.lhs_at.value_or(0)),
      "write the whole carry, or shrink its shape", {Note{f.carry->ptr, "declared here"}});
}

void CheckReadPrefix(const RuleContext& ctx, const CarryFlow& f, DiagSink& sink) {
  if (f.writers.size() != 1 || !FixedExtent(ctx, *f.writers.front())) return;
  const Use& w = *f.writers.front();
  for (const Use* r : f.readers) {
    if (!Before(ctx, w, *r) || !FixedExtent(ctx, *r)) continue;
    const Proof& p = ctx.LessEq(*r->extent, *w.extent);
    if (p.truth == Truth::kTrue) continue;
    if (p.truth == Truth::kUnknown) {
      sink.Error(
          std::string(codes::kUnproved), r->ptr,
          fmt::format("could not prove that {} reads within what was written", ctx.Describe(*r)));
      continue;
    }
    sink.Error(
        std::string(codes::kReadPastWritten), r->ptr,
        fmt::format("{} reads {} elements of carry `{}` but its producer wrote only {}",
                    ctx.Describe(*r), p.lhs_at.value_or(0), f.carry->name, p.rhs_at.value_or(0)),
        "read only the written prefix, or write more", {Note{w.ptr, "written here"}});
  }
}

}  // namespace

void CheckDataflow(const RuleContext& ctx, DiagSink& sink) {
  std::vector<CarryFlow> flows;
  for (const Buffer& b : ctx.m.buffers) {
    if (!b.malformed && b.kind == BufferKind::kCarry) flows.push_back(FlowOf(ctx, b));
  }
  CheckCycle(ctx, flows, sink);
  for (const CarryFlow& f : flows) {
    CheckOrphanReads(ctx, f, sink);
    CheckTwoWriters(ctx, f, sink);
    CheckCoverage(ctx, f, sink);
    CheckReadPrefix(ctx, f, sink);
  }
}

}  // namespace loadplan::verifier
