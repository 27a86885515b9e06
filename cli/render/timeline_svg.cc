// The SVG memory timeline: stacked memory by kind over the clock, and the arena picture.
#include "cli/render/timeline_svg.h"

#include <algorithm>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "base/bytes.h"
#include "cli/render/memory_series.h"
#include "cli/render/palette.h"
#include "cli/render/svg_writer.h"

namespace loadplan::render {
namespace {

using simulator::LoadPlan;
using simulator::PlannedBuffer;

constexpr double kWidth = 1040, kLeft = 90, kRight = 190, kPanelHeight = 240;
constexpr double kTop1 = 70, kTop2 = kTop1 + kPanelHeight + 90,
                 kHeight = kTop2 + kPanelHeight + 110;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::string_view kArenaLine = "#de2d26", kBoundLine = "#3182bd";

double GiB(uint64_t bytes) { return static_cast<double>(bytes) / kGiB; }

// The end of the clock: every call and every window fits in [0, end); at least 1.
uint32_t ClockEnd(const LoadPlan& plan) {
  uint64_t end = std::max<uint64_t>(plan.calls.size(), 1);
  for (const simulator::BufferId i : StagedBuffers(plan)) {
    end = std::max<uint64_t>(end, simulator::Index(plan.buffer(i).window_end));
  }
  return static_cast<uint32_t>(std::min<uint64_t>(end, UINT32_MAX));
}

void DrawTimeAxis(SvgWriter& svg, const Scale& x, double y_base, uint32_t end) {
  svg.Line(x.p0, y_base, x.p1, y_base, "#000000", "axis");
  const Ticks ticks = NiceTicks(end, 10);
  const double step = std::max(1.0, ticks.values.size() > 1 ? ticks.values[1] : 1.0);
  for (double t = 0; t <= end; t += step) {
    svg.Line(x(t), y_base, x(t), y_base + 4, "#000000", "tick");
    svg.Text(x(t), y_base + 16, fmt::format("{:.0f}", t), "middle", 10);
  }
  svg.Text((x.p0 + x.p1) / 2, y_base + 32, "derive call t (the plan's clock)", "middle");
}

void DrawByteAxis(SvgWriter& svg, const Scale& y, const Ticks& ticks, double x0, double x1) {
  for (const double v : ticks.values) {
    svg.Line(x0, y(v), x1, y(v), "#e0e0e0", "grid");
    svg.Text(x0 - 6, y(v) + 4, fmt::format("{:.{}f}", v, ticks.decimals), "end", 10);
  }
  svg.Line(x0, y.p0, x0, y.p1, "#000000", "axis");
  svg.Raw(fmt::format(
      R"(<text class="label" x="{:.2f}" y="{:.2f}" font-size="11" text-anchor="middle" )"
      R"svg(transform="rotate(-90 {:.2f} {:.2f})">GiB</text>)svg"
      "\n",
      x0 - 55, (y.p0 + y.p1) / 2, x0 - 55, (y.p0 + y.p1) / 2));
}

// A horizontal marker line across the plot with its name at the right end, above the
// line or below it (the arena size and the lower bound are often a pixel apart).
void Marker(SvgWriter& svg, const Scale& x, double y, std::string_view colour, std::string_view cls,
            const std::string& text, bool above) {
  svg.Line(x.p0, y, x.p1, y, colour, cls, "6 3");
  svg.Text(x.p1 + 6, above ? y - 3 : y + 11, text, "start", 10, cls);
}

// A closed step path over [0, end) from height `base(t)` up to `top(t)`.
template <typename Base, typename Top>
std::string StepPath(const Scale& x, const Scale& y, uint32_t end, Base base, Top top) {
  std::string d = fmt::format("M{:.2f},{:.2f}", x(0), y(base(0)));
  auto out = std::back_inserter(d);
  for (uint32_t t = 0; t < end; ++t)
    fmt::format_to(out, " L{:.2f},{:.2f} L{:.2f},{:.2f}", x(t), y(top(t)), x(t + 1), y(top(t)));
  for (uint32_t t = end; t-- > 0;)
    fmt::format_to(out, " L{:.2f},{:.2f} L{:.2f},{:.2f}", x(t + 1), y(base(t)), x(t), y(base(t)));
  return d + " Z";
}

struct MemoryTotals {
  uint64_t resident = 0;  // weights + carries
  uint64_t top = 0;       // the panel's highest value
};

std::optional<MemoryTotals> Totals(const LoadPlan& plan, const MemorySeries& s) {
  MemoryTotals m;
  if (__builtin_add_overflow(s.weight_bytes, s.carry_bytes, &m.resident)) return std::nullopt;
  const uint64_t widest = std::max({s.peak_arena_live, plan.arena_bytes, plan.lower_bound});
  if (__builtin_add_overflow(m.resident, widest, &m.top)) return std::nullopt;
  return m;
}

void DrawColumns(SvgWriter& svg, const LoadPlan& plan, const MemorySeries& s, const Scale& x,
                 uint64_t resident) {
  for (uint32_t t = 0; t < s.arena_live.size(); ++t) {
    const std::string tip = fmt::format(
        "t = {} ({})\nweights {}\ncarries {}\narena live {}\ntotal {}", t, CallLabel(plan.calls[t]),
        base::FormatBytesAuto(s.weight_bytes), base::FormatBytesAuto(s.carry_bytes),
        base::FormatBytesAuto(s.arena_live[t]),
        base::FormatBytesAuto(resident +
                              s.arena_live[t]));  // no overflow: Totals checked resident + peak
    svg.Rect(x(t), kTop1, x(t + 1) - x(t), kPanelHeight, "transparent", "column", tip);
  }
}

void DrawMemoryPanel(SvgWriter& svg, const LoadPlan& plan, const MemorySeries& s,
                     const MemoryTotals& m, const Scale& x, uint32_t end) {
  const Ticks ticks = NiceTicks(GiB(m.top), 5);
  const Scale y{0, std::max(ticks.values.back(), 1e-12), kTop1 + kPanelHeight, kTop1};
  svg.Text(kLeft, kTop1 - 12, "Device memory during the load (stacked by kind)", "start", 13,
           "title");
  DrawByteAxis(svg, y, ticks, x.p0, x.p1);
  const double w = GiB(s.weight_bytes), wc = GiB(m.resident);
  auto live = [&](uint32_t t) {
    return wc + (t < s.arena_live.size() ? GiB(s.arena_live[t]) : 0.0);
  };
  svg.Path(StepPath(
               x, y, end, [](uint32_t) { return 0.0; }, [&](uint32_t) { return w; }),
           KindColour(verifier::BufferKind::kWeight), "weights",
           "weights " + base::FormatBytesAuto(s.weight_bytes));
  svg.Path(StepPath(
               x, y, end, [&](uint32_t) { return w; }, [&](uint32_t) { return wc; }),
           KindColour(verifier::BufferKind::kCarry), "carries",
           "carries " + base::FormatBytesAuto(s.carry_bytes));
  svg.Path(StepPath(
               x, y, end, [&](uint32_t) { return wc; }, live),
           KindColour(verifier::BufferKind::kSource), "arena-live",
           "staging arena: live sources, peak " + base::FormatBytesAuto(s.peak_arena_live));
  DrawColumns(svg, plan, s, x, m.resident);
  Marker(svg, x, y(wc + GiB(plan.arena_bytes)), kArenaLine, "arena-size",
         "+ arena: " + base::FormatBytesAuto(m.resident + plan.arena_bytes), true);
  Marker(svg, x, y(wc + GiB(plan.lower_bound)), kBoundLine, "lower-bound",
         "+ lower bound: " + base::FormatBytesAuto(m.resident + plan.lower_bound), false);
  DrawTimeAxis(svg, x, kTop1 + kPanelHeight, end);
}

std::string SourceTooltip(const PlannedBuffer& b) {
  return fmt::format("{}\nwindow [{}, {})  lane {}\n{} ({} bytes) at offset {}", b.name,
                     b.window_begin, b.window_end,
                     b.lane ? fmt::format("{}", *b.lane) : std::string("-"),
                     base::FormatBytesAuto(b.bytes), b.bytes, base::FormatBytesAuto(b.offset));
}

void DrawArenaPanel(SvgWriter& svg, const LoadPlan& plan, const Scale& x, uint32_t end) {
  const std::vector<simulator::BufferId> staged = StagedBuffers(plan);
  double top = std::max(GiB(plan.arena_bytes), GiB(plan.lower_bound));
  for (const simulator::BufferId i : staged)
    top = std::max(top, GiB(plan.buffer(i).offset) + GiB(plan.buffer(i).bytes));
  const Ticks ticks = NiceTicks(top, 5);
  const Scale y{0, std::max(ticks.values.back(), 1e-12), kTop2 + kPanelHeight, kTop2};
  svg.Text(kLeft, kTop2 - 12, "Staging arena: sources by window (x) and offset (y)", "start", 13,
           "title");
  DrawByteAxis(svg, y, ticks, x.p0, x.p1);
  for (const simulator::BufferId i : staged) {
    const PlannedBuffer& b = plan.buffer(i);
    const double y0 = y(GiB(b.offset)), y1 = y(GiB(b.offset) + GiB(b.bytes));
    const double begin = simulator::Index(b.window_begin), end_t = simulator::Index(b.window_end);
    svg.Rect(x(begin), y1, std::max(x(end_t) - x(begin), 1.0), std::max(y0 - y1, 1.0),
             LaneColour(b.lane ? simulator::Index(*b.lane) : 0), "source", SourceTooltip(b));
  }
  Marker(svg, x, y(GiB(plan.arena_bytes)), kArenaLine, "arena-size",
         "arena " + base::FormatBytesAuto(plan.arena_bytes), true);
  Marker(svg, x, y(GiB(plan.lower_bound)), kBoundLine, "lower-bound",
         "lower bound " + base::FormatBytesAuto(plan.lower_bound), false);
  DrawTimeAxis(svg, x, kTop2 + kPanelHeight, end);
}

void DrawLegend(SvgWriter& svg, const LoadPlan& plan) {
  double x = kLeft;
  const double y = kHeight - 40;
  auto swatch = [&](std::string_view colour, const std::string& text) {
    svg.Rect(x, y - 10, 12, 12, colour, "legend");
    svg.Text(x + 16, y, text, "start", 10);
    x += 30 + 6.0 * static_cast<double>(text.size());
  };
  swatch(KindColour(verifier::BufferKind::kWeight), "weights");
  swatch(KindColour(verifier::BufferKind::kCarry), "carries");
  swatch(KindColour(verifier::BufferKind::kSource), "arena live");
  for (uint32_t lane = 0; lane < std::min<uint32_t>(plan.lanes, 8); ++lane) {
    swatch(LaneColour(lane), fmt::format("lane {}", lane));
  }
}

}  // namespace

base::Result<std::string> RenderTimelineSvg(const LoadPlan& plan) {
  const std::optional<MemorySeries> series = ComputeMemorySeries(plan);
  const std::optional<MemoryTotals> totals = series ? Totals(plan, *series) : std::nullopt;
  if (!totals) return base::Status::Error("timeline: a byte total of the plan overflows 64 bits");
  const uint32_t end = ClockEnd(plan);
  const Scale x{0, static_cast<double>(end), kLeft, kWidth - kRight};
  SvgWriter svg(kWidth, kHeight);
  svg.Text(kLeft, 28,
           fmt::format("{}: {} derive calls, {} lanes, prefetch {}", plan.manifest_name,
                       plan.calls.size(), plan.lanes, plan.prefetch),
           "start", 15, "title");
  DrawMemoryPanel(svg, plan, *series, *totals, x, end);
  DrawArenaPanel(svg, plan, x, end);
  DrawLegend(svg, plan);
  return svg.Finish();
}

}  // namespace loadplan::render
