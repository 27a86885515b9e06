// The SVG memory timeline: stacked memory by kind over the clock, and the arena picture.
#include "cli/render/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>
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
constexpr double kCharPx = 6;          // estimated width of a character at font-size 10
constexpr double kLabelGap = 12;       // least distance between two label baselines
constexpr double kMinTextPx = 12;      // least height of an area that holds a text
constexpr double kTextShift = 3.5;     // baseline below an area's middle that centres font-size 10
constexpr double kPeakHeadroom = 0.1;  // share of the memory panel above its top value

struct LineStyle {
  std::string_view colour, dash;
  double width;
};
// Red dashes over thick purple dots: distinct even where the two lines coincide.
constexpr LineStyle kArenaLine{"#de2d26", "8 4", 1.5}, kBoundLine{"#6a3d9a", "2 3", 2.5};
constexpr LineStyle kPeakLine{"#252525", "4 2", 1};

double TextPx(std::string_view text) { return kCharPx * static_cast<double>(text.size()); }

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

// A panel's byte axis: the unit its top value picks, nice ticks in that unit, the y scale.
struct ByteAxis {
  ByteUnit unit;
  Ticks ticks;
  Scale y;
  double operator()(uint64_t bytes) const { return y(static_cast<double>(bytes) / unit.bytes); }
};

// `headroom`: the share of the panel kept free above `top`.
ByteAxis MakeByteAxis(uint64_t top, double panel_top, double headroom) {
  ByteAxis a{.unit = PickByteUnit(top), .ticks = {}, .y = {}};
  const double v = static_cast<double>(top) / a.unit.bytes;
  a.ticks = NiceTicks(a.unit.bytes == 1 ? std::max(v, 5.0) : v, 5);  // no fractional bytes
  const double v1 = std::max({a.ticks.values.back(), v / (1 - headroom), 1e-12});
  a.y = Scale{0, v1, panel_top + kPanelHeight, panel_top};
  return a;
}

void DrawByteAxis(SvgWriter& svg, const ByteAxis& a, double x0, double x1) {
  for (const double v : a.ticks.values) {
    svg.Line(x0, a.y(v), x1, a.y(v), "#e0e0e0", "grid");
    svg.Text(x0 - 6, a.y(v) + 4, fmt::format("{:.{}f}", v, a.ticks.decimals), "end", 10);
  }
  const double top = a.y(a.ticks.values.back()), bottom = a.y.p0;
  svg.Line(x0, bottom, x0, top, "#000000", "axis");
  svg.VerticalText(x0 - 55, (bottom + top) / 2, a.unit.name);
}

// A label in the column right of a plot, at the baseline it wants unless others crowd it.
struct SideLabel {
  double wanted;  // baseline
  std::string text;
  std::string_view cls, fill;
};

void DrawSideLabels(SvgWriter& svg, double x, std::vector<SideLabel> labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const SideLabel& a, const SideLabel& b) { return a.wanted < b.wanted; });
  std::vector<double> wanted;
  for (const SideLabel& l : labels) wanted.push_back(l.wanted);
  const std::vector<double> at = SpreadLabels(wanted, kLabelGap);
  for (size_t i = 0; i < labels.size(); ++i)
    svg.Text(x, at[i], labels[i].text, "start", 10, labels[i].cls, labels[i].fill);
}

void DrawLine(SvgWriter& svg, const Scale& x, double y, const LineStyle& style,
              std::string_view cls) {
  svg.Line(x.p0, y, x.p1, y, style.colour, cls, style.dash, style.width);
}

// The arena-size and lower-bound lines at `base` + each (the lower bound under the arena).
void DrawMarkerLines(SvgWriter& svg, const LoadPlan& plan, const Scale& x, const ByteAxis& a,
                     uint64_t base) {
  DrawLine(svg, x, a(base + plan.lower_bound), kBoundLine, "lower-bound");
  DrawLine(svg, x, a(base + plan.arena_bytes), kArenaLine, "arena-size");
}

// The two lines' names, or one joint name when arena and bound are equal. `prefix`
// says what is added below ("+ " in the memory panel: resident + ...).
std::vector<SideLabel> MarkerLabels(const LoadPlan& plan, const ByteAxis& a, uint64_t base,
                                    std::string_view prefix) {
  const uint64_t arena = base + plan.arena_bytes, bound = base + plan.lower_bound;
  if (plan.arena_bytes == plan.lower_bound) {
    return {{a(arena) + kTextShift,
             fmt::format("{}arena = lower bound = {}", prefix, base::FormatBytesAuto(arena)),
             "arena-bound-label", kArenaLine.colour}};
  }
  return {{a(arena) + kTextShift, fmt::format("{}arena: {}", prefix, base::FormatBytesAuto(arena)),
           "arena-size-label", kArenaLine.colour},
          {a(bound) + kTextShift,
           fmt::format("{}lower bound: {}", prefix, base::FormatBytesAuto(bound)),
           "lower-bound-label", kBoundLine.colour}};
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

void DrawMemoryAreas(SvgWriter& svg, const MemorySeries& s, const MemoryTotals& m, const Scale& x,
                     const ByteAxis& a, uint32_t end) {
  const double w = static_cast<double>(s.weight_bytes) / a.unit.bytes;
  const double wc = static_cast<double>(m.resident) / a.unit.bytes;
  auto live = [&](uint32_t t) {
    return wc +
           (t < s.arena_live.size() ? static_cast<double>(s.arena_live[t]) / a.unit.bytes : 0.0);
  };
  svg.Path(StepPath(
               x, a.y, end, [](uint32_t) { return 0.0; }, [&](uint32_t) { return w; }),
           KindColour(verifier::BufferKind::kWeight), "weights",
           "weights " + base::FormatBytesAuto(s.weight_bytes));
  svg.Path(StepPath(
               x, a.y, end, [&](uint32_t) { return w; }, [&](uint32_t) { return wc; }),
           KindColour(verifier::BufferKind::kCarry), "carries",
           "carries " + base::FormatBytesAuto(s.carry_bytes));
  svg.Path(StepPath(
               x, a.y, end, [&](uint32_t) { return wc; }, live),
           KindColour(verifier::BufferKind::kSource), "arena-live",
           "staging arena: live sources, peak " + base::FormatBytesAuto(s.peak_arena_live));
}

// A constant band from pixel height `low` (bottom) up to `high`: its name inside at the
// left when the band is tall enough, else in the side column.
void LabelBand(SvgWriter& svg, const Scale& x, double low, double high, const std::string& text,
               std::vector<SideLabel>& side) {
  if (low - high >= kMinTextPx && TextPx(text) + 8 <= x.p1 - x.p0) {
    svg.Text(x.p0 + 4, (low + high) / 2 + kTextShift, text, "start", 10, "area-label");
  } else {
    side.push_back({(low + high) / 2 + kTextShift, text, "area-label", {}});
  }
}

// A run of consecutive columns and the least height over it.
struct ColumnRun {
  size_t first = 0;
  double height = 0;
};

// Of the runs of `count` columns, the first with the largest least height, if that height
// is at least kMinTextPx.
std::optional<ColumnRun> TallestRun(const std::vector<double>& heights, size_t count) {
  std::optional<ColumnRun> best;
  for (size_t first = 0; first + count <= heights.size(); ++first) {
    const auto begin = heights.begin() + static_cast<ptrdiff_t>(first);
    const double low = *std::min_element(begin, begin + static_cast<ptrdiff_t>(count));
    if (low >= kMinTextPx && (!best || low > best->height)) best = ColumnRun{first, low};
  }
  return best;
}

// The arena-live area's name inside the run of columns that holds it best, else in the
// side column beside the middle of the peak.
void LabelArenaLive(SvgWriter& svg, const MemorySeries& s, const MemoryTotals& m, const Scale& x,
                    const ByteAxis& a, std::vector<SideLabel>& side) {
  const std::string text = "arena live (peak " + base::FormatBytesAuto(s.peak_arena_live) + ")";
  const double base_px = a(m.resident);
  std::vector<double> heights;
  for (const uint64_t live : s.arena_live) heights.push_back(base_px - a(m.resident + live));
  const auto columns = static_cast<size_t>(std::ceil((TextPx(text) + 8) / (x(1) - x(0))));
  if (const std::optional<ColumnRun> run = TallestRun(heights, std::max<size_t>(columns, 1))) {
    svg.Text(x(static_cast<double>(run->first)) + 4, base_px - run->height / 2 + kTextShift, text,
             "start", 10, "area-label");
  } else {
    const double peak_height = base_px - a(m.resident + s.peak_arena_live);
    side.push_back({base_px - peak_height / 2 + kTextShift, text, "area-label", {}});
  }
}

// Names the stacked areas that have bytes; returns the names that go to the side column.
std::vector<SideLabel> LabelAreas(SvgWriter& svg, const MemorySeries& s, const MemoryTotals& m,
                                  const Scale& x, const ByteAxis& a) {
  std::vector<SideLabel> side;
  if (s.weight_bytes > 0)
    LabelBand(svg, x, a(0), a(s.weight_bytes), "weights " + base::FormatBytesAuto(s.weight_bytes),
              side);
  if (s.carry_bytes > 0)
    LabelBand(svg, x, a(s.weight_bytes), a(m.resident),
              "carries " + base::FormatBytesAuto(s.carry_bytes), side);
  if (s.peak_arena_live > 0) LabelArenaLive(svg, s, m, x, a, side);
  return side;
}

// The first clock time whose arena live bytes are the peak; nullopt without calls.
std::optional<uint32_t> PeakTime(const MemorySeries& s) {
  if (s.arena_live.empty()) return std::nullopt;
  return static_cast<uint32_t>(std::max_element(s.arena_live.begin(), s.arena_live.end()) -
                               s.arena_live.begin());
}

// A vertical line through the middle of the peak's column, named in the panel's headroom.
void DrawPeak(SvgWriter& svg, const LoadPlan& plan, const MemorySeries& s, const MemoryTotals& m,
              const Scale& x) {
  const std::optional<uint32_t> t = PeakTime(s);
  if (!t) return;
  const double px = (x(*t) + x(*t + 1.0)) / 2;
  svg.Line(px, kTop1 + kPanelHeight, px, kTop1 + 15, kPeakLine.colour, "peak", kPeakLine.dash);
  const std::string text = fmt::format("peak {} at t = {} (call {})",
                                       base::FormatBytesAuto(m.resident + s.peak_arena_live), *t,
                                       CallLabel(plan.calls[*t]));
  const bool right = px + 4 + TextPx(text) <= x.p1;
  svg.Text(right ? px + 4 : px - 4, kTop1 + 11, text, right ? "start" : "end", 10, "peak-label");
}

void DrawMemoryPanel(SvgWriter& svg, const LoadPlan& plan, const MemorySeries& s,
                     const MemoryTotals& m, const Scale& x, uint32_t end) {
  const ByteAxis a = MakeByteAxis(m.top, kTop1, kPeakHeadroom);
  svg.Text(kLeft, kTop1 - 12, "Device memory during the load (stacked by kind)", "start", 13,
           "title");
  DrawByteAxis(svg, a, x.p0, x.p1);
  DrawMemoryAreas(svg, s, m, x, a, end);
  std::vector<SideLabel> side = LabelAreas(svg, s, m, x, a);
  DrawColumns(svg, plan, s, x, m.resident);
  DrawMarkerLines(svg, plan, x, a, m.resident);
  DrawPeak(svg, plan, s, m, x);
  for (SideLabel& l : MarkerLabels(plan, a, m.resident, "+ ")) side.push_back(std::move(l));
  DrawSideLabels(svg, x.p1 + 6, std::move(side));
  DrawTimeAxis(svg, x, kTop1 + kPanelHeight, end);
}

std::string SourceTooltip(const PlannedBuffer& b) {
  return fmt::format("{}\nwindow [{}, {})  lane {}\n{} ({} bytes) at offset {}", b.name,
                     b.window_begin, b.window_end,
                     b.lane ? fmt::format("{}", *b.lane) : std::string("-"),
                     base::FormatBytesAuto(b.bytes), b.bytes, base::FormatBytesAuto(b.offset));
}

// The arena panel's top value: arena, bound and every source's end (saturating).
uint64_t ArenaTop(const LoadPlan& plan, const std::vector<simulator::BufferId>& staged) {
  uint64_t top = std::max(plan.arena_bytes, plan.lower_bound);
  for (const simulator::BufferId i : staged) {
    uint64_t source_end = UINT64_MAX;
    (void)__builtin_add_overflow(plan.buffer(i).offset, plan.buffer(i).bytes, &source_end);
    top = std::max(top, source_end);
  }
  return top;
}

// A source's name inside its rectangle, cut to the width; none where it is too low.
void LabelSource(SvgWriter& svg, const PlannedBuffer& b, double x, double y, double w, double h) {
  if (h < kMinTextPx || w < 4) return;
  const std::string text = FitText(b.name, static_cast<size_t>((w - 4) / kCharPx));
  if (!text.empty()) svg.Text(x + 2, y + h / 2 + kTextShift, text, "start", 10, "source-label");
}

void DrawSource(SvgWriter& svg, const PlannedBuffer& b, const Scale& x, const ByteAxis& a) {
  const double offset = static_cast<double>(b.offset) / a.unit.bytes;
  const double y0 = a.y(offset), y1 = a.y(offset + static_cast<double>(b.bytes) / a.unit.bytes);
  const double begin = simulator::Index(b.window_begin), end_t = simulator::Index(b.window_end);
  const double w = std::max(x(end_t) - x(begin), 1.0), h = std::max(y0 - y1, 1.0);
  svg.Rect(x(begin), y1, w, h, LaneColour(b.lane ? simulator::Index(*b.lane) : 0), "source",
           SourceTooltip(b));
  LabelSource(svg, b, x(begin), y1, w, h);
}

void DrawArenaPanel(SvgWriter& svg, const LoadPlan& plan, const Scale& x, uint32_t end) {
  const std::vector<simulator::BufferId> staged = StagedBuffers(plan);
  const ByteAxis a = MakeByteAxis(ArenaTop(plan, staged), kTop2, 0);
  svg.Text(kLeft, kTop2 - 12, "Staging arena: sources by window (x) and offset (y)", "start", 13,
           "title");
  DrawByteAxis(svg, a, x.p0, x.p1);
  for (const simulator::BufferId i : staged) DrawSource(svg, plan.buffer(i), x, a);
  DrawMarkerLines(svg, plan, x, a, 0);
  DrawSideLabels(svg, x.p1 + 6, MarkerLabels(plan, a, 0, ""));
  DrawTimeAxis(svg, x, kTop2 + kPanelHeight, end);
}

void DrawLegend(SvgWriter& svg, const LoadPlan& plan) {
  double x = kLeft, y = kHeight - 48;
  auto swatch = [&](std::string_view colour, const std::string& text) {
    svg.Rect(x, y - 10, 12, 12, colour, "legend");
    svg.Text(x + 16, y, text, "start", 10);
    x += 30 + TextPx(text);
  };
  swatch(KindColour(verifier::BufferKind::kWeight), "weights");
  swatch(KindColour(verifier::BufferKind::kCarry), "carries");
  swatch(KindColour(verifier::BufferKind::kSource), "arena live");
  for (uint32_t lane = 0; lane < std::min<uint32_t>(plan.lanes, 8); ++lane) {
    swatch(LaneColour(lane), fmt::format("lane {}", lane));
  }
  x = kLeft;
  y = kHeight - 26;
  auto line = [&](const LineStyle& style, const std::string& text) {
    svg.Line(x, y - 4, x + 24, y - 4, style.colour, "legend", style.dash, style.width);
    svg.Text(x + 28, y, text, "start", 10);
    x += 42 + TextPx(text);
  };
  line(kArenaLine, "arena size (what is allocated)");
  line(kBoundLine, "lower bound (the widest live set)");
  line(kPeakLine, "peak of resident + arena live");
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
