// `loadplan plan`'s report as text: load breakdown, staging saving, phases, widest moment, fit.
#include <fmt/format.h>

#include "base/bytes.h"
#include "cli/cmd_plan_report.h"
#include "simulator/plan_totals.h"

namespace loadplan::cli {
namespace {

using simulator::FormatGiB;

constexpr size_t kMaxListed = 12;

std::string Line(std::string_view label, uint64_t bytes, std::string_view note = {}) {
  return fmt::format("  {:<44}{:>14} {:>18}{}{}\n", label, FormatGiB(bytes), bytes,
                     note.empty() ? "" : "  ", note);
}

std::string Clip(std::string s) { return s.size() > 160 ? s.substr(0, 157) + "..." : s; }

// GiB for sizes that show in GiB, bytes for small ones.
std::string Human(int64_t bytes) {
  if (bytes < 0) return fmt::format("{} B", bytes);
  return base::FormatBytesOrGiB(static_cast<uint64_t>(bytes), uint64_t{1} << 24);
}

std::string BoundText(const std::optional<simulator::PhaseBound>& b) {
  if (!b) return "unknown";
  const std::string at = verifier::FormatAssignment(b->at);
  return fmt::format("{}{}{}", b->exact ? "" : "<= ", Human(b->value),
                     at.empty() ? "" : " at " + at);
}

std::string RangeText(const std::optional<verifier::Range>& r) {
  if (!r) return "unknown";
  if (r->min == r->max) return Human(r->max);
  return fmt::format("{} .. {}", Human(r->min), Human(r->max));
}

std::string Header(const verifier::Manifest& m, const PlanReport& r) {
  const simulator::LoadPlan& p = r.plan;
  size_t staged = 0, skipped = 0;
  for (const simulator::PlannedBuffer& b : p.buffers) {
    staged += b.residence == simulator::Residence::kStaged;
    skipped += b.residence == simulator::Residence::kSkipped;
  }
  std::string out = fmt::format("plan of {} ({})\n", m.name, r.display_name);
  out += fmt::format(
      "  derive: {} programs, {} calls in dataflow order; {} sources staged, {} unread\n",
      p.derive_order.size(), p.calls.size(), staged, skipped);
  out += fmt::format(
      "  load: {} lane{}, prefetch {}, placement {}, alignment {} B, allocations rounded to {} B\n",
      p.lanes, p.lanes == 1 ? "" : "s", p.prefetch, simulator::PlacementPolicyName(p.placement),
      p.alignment, p.granularity);
  if (r.warnings > 0)
    out += fmt::format("  verifier: {} warning{} (run `loadplan check`)\n", r.warnings,
                       r.warnings == 1 ? "" : "s");
  return out;
}

std::string LoadSection(const PlanReport& r) {
  const simulator::LoadPlan& p = r.plan;
  const uint64_t load = simulator::LoadPeakBytes(p);
  std::string out = "\nload: one resident pool + one staging arena\n";
  for (const simulator::KindTotal& k : r.phases.kinds) {
    if ((k.kind == "weight" || k.kind == "carry") && k.range) {
      out += Line(k.kind == "weight" ? "weights" : "carries (derived weights among them)",
                  static_cast<uint64_t>(k.range->max));
    }
  }
  out += Line("resident pool, rounded", p.resident_bytes_rounded);
  out += Line("staging arena, rounded", p.arena_bytes_rounded,
              fmt::format("(placed: {} B)", p.arena_bytes));
  out += Line("load peak", load);
  out += Line("lower bound: widest set of live sources", p.lower_bound);
  out += fmt::format("  {:<44}{:>14.3f}  (lower bound / arena)\n", "staging efficiency",
                     p.arena_bytes == 0
                         ? 1.0
                         : static_cast<double>(p.lower_bound) / static_cast<double>(p.arena_bytes));
  out += Line("naive peak: every source resident", r.phases.naive_peak);
  const uint64_t saved = r.phases.naive_peak > load ? r.phases.naive_peak - load : 0;
  out += Line(
      "staging saves", saved,
      fmt::format(
          "(naive / load = {:.2f}x)",
          load == 0 ? 1.0 : static_cast<double>(r.phases.naive_peak) / static_cast<double>(load)));
  return out;
}

std::string PhaseSection(const PlanReport& r) {
  std::string out = "\nserve-time buffers over the variable box\n";
  for (const simulator::KindTotal& k : r.phases.kinds) {
    if (k.kind == "weight" || k.kind == "carry" || k.kind == "arena") continue;
    out += fmt::format("  {:<10}{:<34}  = {}\n", k.kind, RangeText(k.range),
                       Clip(verifier::ToString(k.bytes)));
  }
  out += "\nphases (min and max over the box, and where)\n";
  for (const simulator::PhasePeak& ph : r.phases.phases) {
    if (ph.bytes.IsConst()) {
      out += fmt::format("  {:<7} {} ({} B, the same at every point)\n", ph.name,
                         Human(ph.bytes.value), ph.bytes.value);
      continue;
    }
    out += fmt::format("  {:<7} min {}\n          max {}\n", ph.name, BoundText(ph.min),
                       BoundText(ph.max));
    if (!r.at.empty())
      out +=
          fmt::format("          at {}: {}\n", verifier::FormatAssignment(r.at), RangeText(ph.at));
    out += fmt::format("          = {}\n", Clip(verifier::ToString(ph.bytes)));
    if (!ph.error.ok()) out += fmt::format("          error: {}\n", ph.error.message());
  }
  out += fmt::format("  peak: {} phase, {}\n", r.phases.peak_phase, BoundText(r.phases.peak));
  return out;
}

std::string WidestSection(const PlanReport& r) {
  if (!r.widest) return "\nwidest moment: nothing is staged\n";
  const simulator::LoadPlan& p = r.plan;
  const simulator::PlannedCall& c = p.call(simulator::CallId{simulator::Index(r.widest->time)});
  std::string out =
      fmt::format("\nwidest moment: call {} ({} call {}): {} sources live, {} ({} B)\n",
                  r.widest->time, c.program, c.call_in_program, r.widest->live.size(),
                  FormatGiB(r.widest->bytes), r.widest->bytes);
  for (size_t k = 0; k < r.widest->live.size() && k < kMaxListed; ++k) {
    const simulator::PlannedBuffer& b = p.buffer(r.widest->live[k]);
    const simulator::PlannedCall& first = p.call(b.first_reader);
    const simulator::PlannedCall& last = p.call(b.last_reader);
    const std::string readers =
        b.first_reader == b.last_reader
            ? fmt::format("call {} ({} call {})", b.first_reader, first.program,
                          first.call_in_program)
            : fmt::format("calls {}..{} ({} call {} .. {} call {})", b.first_reader, b.last_reader,
                          first.program, first.call_in_program, last.program, last.call_in_program);
    out += fmt::format("  {:<36} {:>12}  window [{}, {})  read by {}\n", b.name, FormatGiB(b.bytes),
                       b.window_begin, b.window_end, readers);
  }
  if (r.widest->live.size() > kMaxListed)
    out += fmt::format("  ... and {} more\n", r.widest->live.size() - kMaxListed);
  return out;
}

std::string FigureText(std::string_view figure) {
  if (figure == "total") return ", the device's total memory";
  if (figure == "free") return ", free memory read from the GPU now";
  return {};
}

std::string DeviceSection(const verifier::Manifest& m, const PlanReport& r) {
  if (!r.device_bytes) return {};
  const uint64_t peak = r.phases.peak ? static_cast<uint64_t>(r.phases.peak->value) : 0;
  const uint64_t budget = *r.BudgetBytes();
  std::string out =
      fmt::format("\ndevice memory: {} = {} ({} B){}\n", r.device_label, FormatGiB(*r.device_bytes),
                  *r.device_bytes, FigureText(r.device_figure));
  out +=
      fmt::format("  reserve {} ({} B, --reserve): budget {} ({} B) for the manifest's buffers\n",
                  FormatGiB(r.reserve_bytes), r.reserve_bytes, FormatGiB(budget), budget);
  const std::string where =
      r.phases.peak ? "at " + verifier::FormatAssignment(r.phases.peak->at) : "unknown";
  const uint64_t over = peak > budget ? peak - budget : 0;
  const bool point = r.FitsAt() && !r.at.empty() && r.at.size() == m.vars.size();
  if (point) {  // the point's verdict is the verdict; the box's is context, in lower case
    out += fmt::format("  at {}: {} (every variable bound: the verdict is judged at this point)\n",
                       verifier::FormatAssignment(r.at), *r.FitsAt() ? "fits" : "DOES NOT FIT");
    out += *r.FitsBox()
               ? fmt::format("  over every admissible value: fits, peak {}\n", FormatGiB(peak))
               : fmt::format("  over every admissible value: would not fit, peak {} {}, {} over\n",
                             FormatGiB(peak), where, FormatGiB(over));
    return out;
  }
  if (*r.FitsBox()) {
    out += fmt::format("  fits for every admissible value: peak {}, {} to spare\n", FormatGiB(peak),
                       FormatGiB(budget - peak));
  } else {
    out += fmt::format("  DOES NOT FIT: peak {} {}, {} over\n", FormatGiB(peak), where,
                       FormatGiB(over));
  }
  if (r.FitsAt() && !r.at.empty()) {
    out += fmt::format("  at {}: {}\n", verifier::FormatAssignment(r.at),
                       *r.FitsAt() ? "fits" : "does not fit");
  }
  return out;
}

}  // namespace

std::string ReportText(const verifier::Manifest& m, const PlanReport& r) {
  return Header(m, r) + LoadSection(r) + PhaseSection(r) + WidestSection(r) + DeviceSection(m, r) +
         FrontierText(m, r);
}

}  // namespace loadplan::cli
