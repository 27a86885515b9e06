// The liveness view: rows of bars on the plan's clock, the serve column, the widest moment.
#include "cli/render/liveness_svg.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/bytes.h"
#include "cli/render/memory_series.h"
#include "cli/render/palette.h"
#include "cli/render/svg_writer.h"
#include "cli/render/xml_escape.h"

namespace loadplan::render {
namespace {

using simulator::Index;
using simulator::LoadPlan;
using simulator::PlannedBuffer;
using simulator::Residence;

constexpr double kWidth = 1600, kLabelW = 250, kBytesW = 170, kServeW = 120, kGap = 14;
constexpr double kLoadX0 = kLabelW + 10, kServeX1 = kWidth - kBytesW - 10,
                 kServeX0 = kServeX1 - kServeW, kLoadX1 = kServeX0 - kGap;
constexpr double kTop = 150, kBufferRowH = 15, kGroupRowH = 20, kFoot = 70;
constexpr std::string_view kWidest = "#de2d26";
constexpr size_t kNamesShown = 8;

// Slot -> pixels: the load's clock over [kLoadX0, kLoadX1], the serve slot its own column.
struct SlotScale {
  uint32_t end = 1;
  [[nodiscard]] double X(uint32_t slot) const {
    if (slot > end) return kServeX1;
    if (slot == end) return kLoadX1;
    return kLoadX0 + (kLoadX1 - kLoadX0) * slot / end;
  }
  // The bar [begin, end) in pixels; a bar into the serve slot ends at the column's right.
  [[nodiscard]] std::pair<double, double> Span(const LiveBar& b) const {
    const double x0 = b.begin >= end ? kServeX0 : X(b.begin);
    const double x1 = b.end > end ? kServeX1 : X(b.end);
    return {x0, std::max(x1, x0 + 1.5)};
  }
};

std::string BarColour(const PlannedBuffer& b) {
  if (b.residence == Residence::kStaged)
    return std::string(LaneColour(b.lane ? Index(*b.lane) : 0));
  return std::string(KindColour(b.kind));
}

std::string BarTooltip(const PlannedBuffer& b) {
  std::string tip = fmt::format("{}\n{}, {} ({} bytes)", b.name, verifier::BufferKindName(b.kind),
                                base::FormatBytesAuto(b.bytes), b.bytes);
  if (b.residence == Residence::kStaged) {
    tip += fmt::format("\nwindow [{}, {})  lane {}\narena offset {} ({} bytes)", b.window_begin,
                       b.window_end, b.lane ? Index(*b.lane) : 0, base::FormatBytesAuto(b.offset),
                       b.offset);
  } else if (b.residence == Residence::kResident) {
    tip += fmt::format("\nresident pool offset {}", base::FormatBytesAuto(b.offset));
  } else {
    tip += "\nallocated for serving (bytes: the maximum over the variable box)";
  }
  return tip;
}

std::string BarClass(const PlannedBuffer& b) {
  return fmt::format("bar {}", verifier::BufferKindName(b.kind));
}

// One buffer per row: a full-height bar; a source's offset is written after its bytes.
void DrawBufferRow(SvgWriter& svg, const LoadPlan& plan, const SlotScale& s, const LiveRow& row,
                   double y) {
  const LiveBar& bar = row.bars.front();
  const PlannedBuffer& b = plan.buffer(bar.buffer);
  const auto [x0, x1] = s.Span(bar);
  svg.Rect(x0, y + 2, x1 - x0, kBufferRowH - 4, BarColour(b), BarClass(b), BarTooltip(b));
  std::string right = base::FormatBytesAuto(b.bytes);
  if (b.residence == Residence::kStaged) right += " @ " + base::FormatBytesAuto(b.offset);
  svg.Text(kServeX1 + 8, y + kBufferRowH - 4, right, "start", 10, "row-bytes");
}

// One layer per row: sources drawn at their arena offset (the row's upper part is the arena,
// top = arena end), resident buffers as a strip along the bottom, serve buffers in the column.
void DrawGroupRow(SvgWriter& svg, const LoadPlan& plan, const SlotScale& s, const LiveRow& row,
                  double y) {
  const double arena_h = kGroupRowH - 8, arena = std::max<double>(plan.arena_bytes, 1);
  for (const LiveBar& bar : row.bars) {
    const PlannedBuffer& b = plan.buffer(bar.buffer);
    const auto [x0, x1] = s.Span(bar);
    if (b.residence == Residence::kStaged) {
      const double h = std::max(1.5, arena_h * static_cast<double>(b.bytes) / arena);
      const double top = y + 1 + arena_h * (1 - static_cast<double>(b.offset) / arena) - h;
      svg.Rect(x0, std::max(top, y + 1), x1 - x0, h, BarColour(b), BarClass(b), BarTooltip(b));
    } else {
      svg.Rect(x0, y + kGroupRowH - 6, x1 - x0, 4, BarColour(b), BarClass(b), BarTooltip(b));
    }
  }
  svg.Text(kServeX1 + 8, y + kGroupRowH - 6,
           fmt::format("{} ({} buffers)", base::FormatBytesAuto(row.bytes), row.bars.size()),
           "start", 10, "row-bytes");
}

void DrawRowLabel(SvgWriter& svg, const LiveRow& row, double y, double h) {
  const std::string cls = row.live_at_widest ? "row-label live" : "row-label";
  std::string text = row.label.size() > 40 ? row.label.substr(0, 39) + "…" : row.label;
  svg.Raw(fmt::format(
      R"(<text class="{}" x="{:.2f}" y="{:.2f}" text-anchor="end" font-size="10"{}>{}</text>)"
      "\n",
      XmlEscape(cls), kLabelW, y + h - 5,
      row.live_at_widest ? fmt::format(R"( font-weight="bold" fill="{}")", kWidest) : "",
      XmlEscape(text)));
}

double RowHeight(const LiveModel& m) { return m.collapsed ? kGroupRowH : kBufferRowH; }

void DrawRows(SvgWriter& svg, const LoadPlan& plan, const LiveModel& m, const SlotScale& s) {
  const double h = RowHeight(m);
  for (size_t r = 0; r < m.rows.size(); ++r) {
    const double y = kTop + h * static_cast<double>(r);
    if (r > 0 && m.rows[r].group != m.rows[r - 1].group)
      svg.Line(kLabelW - 120, y, kServeX1, y, "#bdbdbd", "group-separator");
    if (r % 2 == 1) svg.Rect(kLoadX0, y, kServeX1 - kLoadX0, h, "#f7f7f7", "row-shade");
    DrawRowLabel(svg, m.rows[r], y, h);
    if (m.collapsed) {
      DrawGroupRow(svg, plan, s, m.rows[r], y);
    } else {
      DrawBufferRow(svg, plan, s, m.rows[r], y);
    }
  }
}

std::string LiveNames(const LoadPlan& plan, const simulator::WidestMoment& w) {
  std::string names;
  for (size_t i = 0; i < w.live.size() && i < kNamesShown; ++i)
    names += (i ? ", " : "") + plan.buffer(w.live[i]).name;
  if (w.live.size() > kNamesShown)
    names += fmt::format(", … (+{} more)", w.live.size() - kNamesShown);
  return names;
}

// The widest moment: a band over its clock time through every row, and two lines of text.
void DrawWidest(SvgWriter& svg, const LoadPlan& plan, const LiveModel& m, const SlotScale& s,
                double bottom) {
  if (!m.widest) {
    svg.Text(kLoadX0, kTop - 38, "nothing is staged: no source is live at any time", "start", 11,
             "widest-label");
    return;
  }
  const simulator::WidestMoment& w = *m.widest;
  const uint32_t t = Index(w.time);
  const double x0 = s.X(t), x1 = std::max(s.X(t + 1), x0 + 2);
  svg.Raw(
      fmt::format(R"(<rect class="widest" data-call="{}" data-bytes="{}" x="{:.2f}" y="{:.2f}" )"
                  R"(width="{:.2f}" height="{:.2f}" fill="{}" fill-opacity="0.18" stroke="{}"/>)"
                  "\n",
                  t, w.bytes, x0, kTop - 24, x1 - x0, bottom - kTop + 24, kWidest, kWidest));
  const std::string call = t < plan.calls.size() ? CallLabel(plan.calls[t]) : "-";
  svg.Text(kLoadX0, kTop - 44,
           fmt::format("widest moment: t = {} ({}), {} sources live, {} in the arena "
                       "(its lower bound)",
                       t, call, w.live.size(), base::FormatBytesAuto(w.bytes)),
           "start", 12, "widest-label");
  svg.Text(kLoadX0, kTop - 28, "live: " + LiveNames(plan, w), "start", 10, "widest-live");
}

void DrawPeakLine(SvgWriter& svg, const std::vector<PhaseMark>& phases) {
  if (phases.empty()) return;
  const auto peak =
      std::max_element(phases.begin(), phases.end(),
                       [](const PhaseMark& a, const PhaseMark& b) { return a.bytes < b.bytes; });
  std::string text = "device memory, each phase's maximum:";
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseMark& p = phases[i];
    text += fmt::format("{} {} {}{}", i ? ";" : "", p.name, base::FormatBytesAuto(p.bytes),
                        p.at.empty() ? "" : " at " + p.at);
  }
  svg.Text(kLoadX0 - 240, 68, text, "start", 11, "phase-peaks");
  for (const PhaseMark& p : phases) {
    if (p.name == "serve")
      svg.Text((kServeX0 + kServeX1) / 2, kTop - 10, "serve " + base::FormatBytesAuto(p.bytes),
               "middle", 11, "serve-total");
  }
  svg.Raw(fmt::format(
      R"(<text class="peak-label" data-phase="{}" data-bytes="{}" x="{:.2f}" y="{:.2f}" )"
      R"(font-size="12" font-weight="bold" fill="{}">peak: {} in the {} phase{}</text>)"
      "\n",
      XmlEscape(peak->name), peak->bytes, kLoadX0 - 240, 86.0, kWidest,
      XmlEscape(base::FormatBytesAuto(peak->bytes)), XmlEscape(peak->name),
      XmlEscape(peak->name == "serve" ? " (after the load: the serve column)" : "")));
}

void DrawHeader(SvgWriter& svg, const LoadPlan& plan, const LiveModel& m) {
  svg.Text(10, 26,
           fmt::format("{}: liveness on the plan's clock ({} derive calls, {} lanes, prefetch {})",
                       plan.manifest_name, plan.calls.size(), plan.lanes, plan.prefetch),
           "start", 15, "title");
  svg.Text(
      10, 46,
      fmt::format(
          "resident pool {} (weights + carries), staging arena {} (lower bound {}); "
          "{}",
          base::FormatBytesAuto(plan.resident_bytes), base::FormatBytesAuto(plan.arena_bytes),
          base::FormatBytesAuto(plan.lower_bound),
          m.collapsed ? "one row per layer (sources at their arena offset)" : "one row per buffer"),
      "start", 11, "subtitle");
}

void DrawLegend(SvgWriter& svg, const LoadPlan& plan, double y) {
  double x = kLoadX0;
  auto swatch = [&](std::string_view colour, const std::string& text) {
    svg.Rect(x, y - 10, 12, 12, colour, "legend");
    svg.Text(x + 16, y, text, "start", 10, "legend-label");
    x += 30 + 6.0 * static_cast<double>(text.size());
  };
  using K = verifier::BufferKind;
  swatch(KindColour(K::kWeight), "weight");
  swatch(KindColour(K::kCarry), "carry");
  for (uint32_t lane = 0; lane < std::min<uint32_t>(plan.lanes, 8); ++lane)
    swatch(LaneColour(lane), fmt::format("source, lane {}", lane));
  swatch(KindColour(K::kState), "state");
  swatch(KindColour(K::kScratch), "scratch");
  swatch(KindColour(K::kInput), "input / output");
}

void DrawAxis(SvgWriter& svg, const SlotScale& s, double y) {
  svg.Line(kLoadX0, y, kLoadX1, y, "#000000", "axis");
  const Ticks ticks = NiceTicks(s.end, 12);
  const double step = std::max(1.0, ticks.values.size() > 1 ? ticks.values[1] : 1.0);
  for (double t = 0; t <= s.end; t += step) {
    const double x = s.X(static_cast<uint32_t>(t));
    svg.Line(x, y, x, y + 4, "#000000", "tick");
    svg.Text(x, y + 15, fmt::format("{:.0f}", t), "middle", 10);
  }
  svg.Text((kLoadX0 + kLoadX1) / 2, y + 30, "load: derive call t (the plan's clock)", "middle", 11,
           "axis-label");
  svg.Line(kServeX0, y, kServeX1, y, "#000000", "axis");
  svg.Text((kServeX0 + kServeX1) / 2, y + 15, "serve", "middle", 11, "axis-label");
  svg.Raw(fmt::format(
      R"(<rect class="serve-column" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" )"
      R"(fill="none" stroke="#636363" stroke-dasharray="4 3"/>)"
      "\n",
      kServeX0, kTop - 4, kServeW, y - kTop + 4));
}

}  // namespace

base::Result<std::string> RenderLivenessSvg(const LoadPlan& plan, const LivenessOptions& options) {
  const std::optional<LiveModel> m = BuildLiveModel(plan, options.rows);
  if (!m) return base::Status::Error("graph: a byte total of the plan overflows 64 bits");
  const SlotScale s{.end = m->clock_end};
  const double bottom = kTop + RowHeight(*m) * static_cast<double>(m->rows.size());
  SvgWriter svg(kWidth, bottom + kFoot);
  DrawHeader(svg, plan, *m);
  DrawPeakLine(svg, options.phases);
  DrawRows(svg, plan, *m, s);
  DrawWidest(svg, plan, *m, s, bottom);
  DrawAxis(svg, s, bottom + 4);
  DrawLegend(svg, plan, bottom + 56);
  return svg.Finish();
}

}  // namespace loadplan::render
