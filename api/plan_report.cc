// The JSON rendering of a plan report: what `loadplan plan --format json` prints and what the
// Python package's Plan.to_dict() returns (one builder for both).
#include "api/plan_report.h"

#include <fmt/format.h>

#include "api/plan_frontier.h"
#include "simulator/plan_totals.h"

namespace loadplan::api {
namespace {

using nlohmann::json;
uint64_t LoadPeak(const PlanReport& r) { return simulator::LoadPeakBytes(r.plan); }

double Ratio(uint64_t a, uint64_t b) {
  return b == 0 ? 1.0 : static_cast<double>(a) / static_cast<double>(b);
}

uint64_t KindBytes(const PlanReport& r, std::string_view kind) {
  for (const simulator::KindTotal& k : r.phases.kinds) {
    if (k.kind == kind && k.range) return static_cast<uint64_t>(k.range->max);
  }
  return 0;
}

struct Counts {
  size_t derive = 0, staged = 0, skipped = 0;
};
Counts CountOf(const PlanReport& r) {
  Counts c{.derive = r.plan.derive_order.size()};
  for (const simulator::PlannedBuffer& b : r.plan.buffers) {
    c.staged += b.residence == simulator::Residence::kStaged;
    c.skipped += b.residence == simulator::Residence::kSkipped;
  }
  return c;
}

std::string CallName(const PlanReport& r, simulator::CallId t) {
  const simulator::PlannedCall& c = r.plan.call(t);
  return fmt::format("{} call {}", c.program, c.call_in_program);
}

json BoundJson(const std::optional<simulator::PhaseBound>& b) {
  if (!b) return nullptr;
  return {{"bytes", b->value},
          {"gib", static_cast<double>(b->value) / (1ull << 30)},
          {"at", b->at},
          {"exact", b->exact}};
}

json WidestJson(const PlanReport& r) {
  if (!r.widest) return nullptr;
  json live = json::array();
  for (simulator::BufferId i : r.widest->live) {
    const simulator::PlannedBuffer& b = r.plan.buffer(i);
    live.push_back(
        {{"name", b.name},
         {"bytes", b.bytes},
         {"offset", b.offset},
         {"lane", b.lane ? simulator::Index(*b.lane) : 0},
         {"window", {simulator::Index(b.window_begin), simulator::Index(b.window_end)}},
         {"readers",
          {{"first", CallName(r, b.first_reader)}, {"last", CallName(r, b.last_reader)}}}});
  }
  const simulator::CallId at{simulator::Index(r.widest->time)};
  return {{"call", simulator::Index(r.widest->time)},
          {"at", CallName(r, at)},
          {"bytes", r.widest->bytes},
          {"live", live}};
}

json DeviceJson(const verifier::Manifest& m, const PlanReport& r) {
  if (!r.device_bytes) return nullptr;
  return {{"label", r.device_label},
          {"bytes", *r.device_bytes},
          {"figure", r.device_figure.empty() ? json(nullptr) : json(r.device_figure)},
          {"reserve", r.reserve_bytes},
          {"budget", *r.BudgetBytes()},
          {"fits_every_value", *r.FitsBox()},
          {"fits_at", r.FitsAt() ? json(*r.FitsAt()) : json(nullptr)},
          {"fits", *r.Fits(m)}};  // the verdict (and the exit code): at the point, else the box
}

}  // namespace

std::optional<uint64_t> PlanReport::BudgetBytes() const {
  if (!device_bytes) return std::nullopt;
  return *device_bytes > reserve_bytes ? *device_bytes - reserve_bytes : 0;
}

std::optional<bool> PlanReport::FitsBox() const {
  if (!device_bytes) return std::nullopt;
  if (!phases.peak || !phases.peak->exact) return false;  // an unknown peak is not a fit
  return phases.peak->value >= 0 && static_cast<uint64_t>(phases.peak->value) <= *BudgetBytes();
}

std::optional<bool> PlanReport::FitsAt() const {
  if (!device_bytes || !phases.peak_at) return std::nullopt;
  return static_cast<uint64_t>(phases.peak_at->max) <= *BudgetBytes();
}

bool PlanReport::AtPoint(const verifier::Manifest& m) const {
  for (const verifier::Variable& v : m.vars) {
    if (!at.contains(v.name)) return false;
  }
  return phases.peak_at.has_value();
}

std::optional<bool> PlanReport::Fits(const verifier::Manifest& m) const {
  return AtPoint(m) ? FitsAt() : FitsBox();
}

namespace {

// "kinds" and "phases": each as its expression and its bounds over the box.
json KindsJson(const PlanReport& r) {
  json kinds = json::array();
  for (const simulator::KindTotal& k : r.phases.kinds) {
    kinds.push_back({{"kind", k.kind},
                     {"expr", verifier::ToString(k.bytes)},
                     {"min", k.range ? json(k.range->min) : json(nullptr)},
                     {"max", k.range ? json(k.range->max) : json(nullptr)}});
  }
  return kinds;
}

json PhasesJson(const PlanReport& r) {
  json phases = json::array();
  for (const simulator::PhasePeak& ph : r.phases.phases) {
    phases.push_back(
        {{"name", ph.name},
         {"expr", verifier::ToString(ph.bytes)},
         {"min", BoundJson(ph.min)},
         {"max", BoundJson(ph.max)},
         {"error", ph.error.message()},
         {"at", ph.at ? json{{"min", ph.at->min}, {"max", ph.at->max}} : json(nullptr)}});
  }
  return phases;
}

json BytesJson(const PlanReport& r) {
  const simulator::LoadPlan& p = r.plan;
  return {{"weights", KindBytes(r, "weight")},
          {"carries", KindBytes(r, "carry")},
          {"resident", p.resident_bytes},
          {"resident_rounded", p.resident_bytes_rounded},
          {"arena", p.arena_bytes},
          {"arena_rounded", p.arena_bytes_rounded},
          {"lower_bound", p.lower_bound},
          {"load_peak", LoadPeak(r)},
          {"naive_peak", r.phases.naive_peak}};
}

}  // namespace

json ReportJson(const verifier::Manifest& m, const PlanReport& r) {
  const simulator::LoadPlan& p = r.plan;
  const Counts c = CountOf(r);
  json j = {{"manifest", m.name},
            {"file", r.display_name},
            {"warnings", r.warnings},
            {"options",
             {{"lanes", p.lanes},
              {"prefetch", p.prefetch},
              {"placement", simulator::PlacementPolicyName(p.placement)},
              {"alignment", p.alignment},
              {"granularity", p.granularity}}},
            {"counts",
             {{"derive_programs", c.derive},
              {"calls", p.calls.size()},
              {"staged_sources", c.staged},
              {"unread_sources", c.skipped},
              {"steps", p.steps.size()}}},
            {"bytes", BytesJson(r)},
            {"staging_efficiency", Ratio(p.lower_bound, p.arena_bytes)},
            {"naive_over_load", Ratio(r.phases.naive_peak, LoadPeak(r))},
            {"kinds", KindsJson(r)},
            {"phases", PhasesJson(r)},
            {"at", r.at},
            {"peak",
             {{"phase", r.phases.peak_phase},
              {"max", BoundJson(r.phases.peak)},
              {"at", r.phases.peak_at
                         ? json{{"min", r.phases.peak_at->min}, {"max", r.phases.peak_at->max}}
                         : json(nullptr)}}},
            {"widest", WidestJson(r)},
            {"device", DeviceJson(m, r)},
            {"frontier", FrontierJson(ReportFrontier(m, r))}};
  AddTimingJson(r, j);
  return j;
}

}  // namespace loadplan::api
