// The capacity heat map: peak over the two main variables, the frontier and its ladder points.
#include "cli/render/capacity_svg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "base/bytes.h"
#include "cli/render/svg_writer.h"
#include "cli/render/xml_escape.h"

namespace loadplan::render {
namespace {

namespace cap = simulator::capacity;

constexpr double kWidth = 980, kHeight = 640, kLeft = 100, kTop = 70, kPlotW = 620, kPlotH = 460;
constexpr int kMaxCellsX = 40, kMaxCellsY = 30;
constexpr std::string_view kLine = "#08306b";

// One axis: a variable's range, log2-scaled when it spans powers of two from 1 up.
struct Axis {
  std::string var;
  int64_t lo = 0, hi = 0;
  bool log = false;
  double p0 = 0, p1 = 1;  // pixels of lo and hi

  [[nodiscard]] double T(double v) const {
    if (hi == lo) return 0.5;
    if (log)
      return (std::log2(v) - std::log2(static_cast<double>(lo))) /
             (std::log2(static_cast<double>(hi)) - std::log2(static_cast<double>(lo)));
    return (v - static_cast<double>(lo)) / static_cast<double>(hi - lo);
  }
  [[nodiscard]] double Px(double v) const { return p0 + (p1 - p0) * T(v); }
  // The integer value at fraction t of the axis.
  [[nodiscard]] int64_t At(double t) const {
    const double v = log ? std::exp2(std::log2(static_cast<double>(lo)) +
                                     t * (std::log2(static_cast<double>(hi)) -
                                          std::log2(static_cast<double>(lo))))
                         : static_cast<double>(lo) + t * static_cast<double>(hi - lo);
    return std::clamp<int64_t>(std::llround(v), lo, hi);
  }
  [[nodiscard]] int Cells(int most) const {
    return static_cast<int>(std::min<int64_t>(most, hi - lo + 1));
  }
};

Axis AxisOf(const cap::PeakModel& m, const std::string& var, double p0, double p1) {
  const verifier::Range r = m.box.at(var);
  return Axis{.var = var,
              .lo = r.min,
              .hi = r.max,
              .log = r.min >= 1 && r.max / r.min >= 16,
              .p0 = p0,
              .p1 = p1};
}

std::string Mix(double t, int r0, int g0, int b0, int r1, int g1, int b1) {
  t = std::clamp(t, 0.0, 1.0);
  auto c = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return fmt::format("#{:02x}{:02x}{:02x}", c(r0, r1), c(g0, g1), c(b0, b1));
}

// Green shades up to the budget, orange to dark red from 1x to 8x over it; grey: no value.
std::string Colour(const cap::PeakValue& v, int64_t budget) {
  if (!v.bytes || budget <= 0) return "#bdbdbd";
  const double f = static_cast<double>(*v.bytes) / static_cast<double>(budget);
  if (f <= 1) return Mix(f, 0xf7, 0xfc, 0xf5, 0x23, 0x8b, 0x45);
  return Mix(std::log2(f) / 3, 0xfd, 0xae, 0x6b, 0x67, 0x00, 0x0d);
}

std::string Bytes(std::optional<int64_t> b) {
  if (!b) return "does not evaluate";
  return *b < 0 ? fmt::format("{} B", *b) : base::FormatBytesAuto(static_cast<uint64_t>(*b));
}

void DrawCells(SvgWriter& svg, const cap::PeakModel& m, const Axis& x, const Axis& y) {
  const int nx = x.Cells(kMaxCellsX), ny = y.Cells(kMaxCellsY);
  const double w = kPlotW / nx, h = kPlotH / ny;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const int64_t xv = x.At((i + 0.5) / nx), yv = y.At((j + 0.5) / ny);
      const cap::PeakValue v = cap::PeakAtPoint(m, {{x.var, xv}, {y.var, yv}});
      svg.Rect(kLeft + i * w, kTop + kPlotH - (j + 1) * h, w + 0.3, h + 0.3, Colour(v, m.budget),
               "cell", fmt::format("{}={}, {}={}: peak {}", x.var, xv, y.var, yv, Bytes(v.bytes)));
    }
  }
}

// Ticks at the ladder values (log axes: every other one when they crowd).
void DrawAxis(SvgWriter& svg, const Axis& a, const std::vector<int64_t>& ladder, bool horizontal) {
  const size_t step = ladder.size() > 12 ? 2 : 1;
  for (size_t k = 0; k < ladder.size(); ++k) {
    if (k % step != 0 && k + 1 != ladder.size()) continue;
    const double p = a.Px(static_cast<double>(ladder[k]));
    if (horizontal) {
      svg.Line(p, kTop + kPlotH, p, kTop + kPlotH + 5, "#000000", "tick");
      svg.Text(p, kTop + kPlotH + 18, fmt::format("{}", ladder[k]), "middle", 10);
    } else {
      svg.Line(kLeft - 5, p, kLeft, p, "#000000", "tick");
      svg.Text(kLeft - 8, p + 4, fmt::format("{}", ladder[k]), "end", 10);
    }
  }
  const std::string name = fmt::format("{}{}", a.var, a.log ? " (log2 scale)" : "");
  if (horizontal) {
    svg.Text(kLeft + kPlotW / 2, kTop + kPlotH + 40, name, "middle", 12, "axis-label");
  } else {
    svg.Raw(fmt::format(
        R"(<text class="axis-label" x="{0:.2f}" y="{1:.2f}" font-size="12" text-anchor="middle" )"
        R"svg(transform="rotate(-90 {0:.2f} {1:.2f})">{2}</text>)svg"
        "\n",
        kLeft - 60, kTop + kPlotH / 2, XmlEscape(name)));
  }
}

void Point(SvgWriter& svg, double px, double py, int table, const cap::Limit& l,
           const std::string& pinned) {
  svg.Raw(fmt::format(
      R"(<circle class="frontier-point" cx="{:.2f}" cy="{:.2f}" r="{}" fill="{}" stroke="#ffffff" )"
      R"(data-table="{}" data-pinned="{}" data-pinned-value="{}" data-var="{}" data-largest="{}" )"
      R"(data-status="{}"><title>{}={}: largest {} {} (peak {})</title></circle>)"
      "\n",
      px, py, table == 0 ? 4.5 : 3, table == 0 ? kLine : "#6a51a3", table, XmlEscape(pinned),
      l.pinned.at(pinned), XmlEscape(l.var), *l.largest, cap::LimitStatusName(l.status),
      XmlEscape(pinned), l.pinned.at(pinned), XmlEscape(l.var), *l.largest,
      Bytes(l.at_largest.bytes)));
}

void DrawFrontier(SvgWriter& svg, const cap::Frontier& f, const Axis& x, const Axis& y) {
  std::string line;
  for (const cap::Limit& l : f.tables[0].rows) {
    if (!l.largest) continue;
    const double px = x.Px(static_cast<double>(l.pinned.at(x.var)));
    const double py = y.Px(static_cast<double>(*l.largest));
    line += fmt::format("{}{:.2f},{:.2f}", line.empty() ? "" : " ", px, py);
  }
  if (!line.empty())
    svg.Raw(fmt::format(R"(<polyline class="frontier" points="{}" fill="none" stroke="{}" )"
                        R"(stroke-width="2"/>)"
                        "\n",
                        line, kLine));
  for (const cap::Limit& l : f.tables[1].rows) {
    if (!l.largest) continue;
    Point(svg, x.Px(static_cast<double>(*l.largest)), y.Px(static_cast<double>(l.pinned.at(y.var))),
          1, l, y.var);
  }
  const std::vector<cap::Limit>& rows = f.tables[0].rows;
  for (size_t k = 0; k < rows.size(); ++k) {
    const cap::Limit& l = rows[k];
    if (!l.largest) continue;
    const double px = x.Px(static_cast<double>(l.pinned.at(x.var)));
    const double py = y.Px(static_cast<double>(*l.largest));
    Point(svg, px, py, 0, l, x.var);
    // Labels where the limit bites (below y's max), and at the last ladder value before it does.
    const bool bites = *l.largest < y.hi;
    const bool corner = k + 1 < rows.size() && rows[k + 1].largest.value_or(y.lo) < y.hi;
    const bool last = k + 1 == rows.size();
    if (bites || corner || k == 0)
      svg.Text(last ? px - 6 : px + 5, py - 7,
               fmt::format("{}={}: {}", x.var, l.pinned.at(x.var), *l.largest),
               last ? "end" : "start", 9, "point-label");
  }
}

void DrawLegend(SvgWriter& svg, int64_t budget) {
  const double x0 = kLeft + kPlotW + 40, y0 = kTop;
  svg.Text(x0, y0, "peak device memory", "start", 12, "legend-title");
  const double fractions[] = {0, 0.25, 0.5, 0.75, 1.0, 2.0, 4.0, 8.0};
  for (size_t k = 0; k < std::size(fractions); ++k) {
    const double fr = fractions[k];
    const int64_t bytes = static_cast<int64_t>(fr * static_cast<double>(budget));
    const double y = y0 + 14 + 22 * static_cast<double>(k);
    svg.Rect(x0, y, 18, 18,
             Colour(cap::PeakValue{.bytes = bytes, .at = {}, .exact = true, .error = {}}, budget),
             "legend-swatch");
    svg.Text(x0 + 26, y + 13,
             fmt::format("{}{}", Bytes(bytes),
                         fr == 1  ? " = budget"
                         : fr > 1 ? fmt::format(" ({:.0f}x)", fr)
                                  : ""),
             "start", 11, "legend");
  }
  const double y = y0 + 14 + 22 * static_cast<double>(std::size(fractions)) + 10;
  svg.Line(x0, y + 6, x0 + 18, y + 6, std::string(kLine), "legend-line");
  svg.Text(x0 + 26, y + 10, "the frontier: the largest", "start", 11, "legend");
  svg.Text(x0 + 26, y + 24, "value that fits, per ladder value", "start", 11, "legend");
}

}  // namespace

base::Result<std::string> RenderCapacitySvg(const cap::PeakModel& m, const cap::Frontier& f,
                                            std::string_view title) {
  if (f.main.size() < 2 || f.tables.size() < 2)
    return base::Status::Error(
        fmt::format("the capacity picture needs two variables; the manifest has {}", m.box.size()));
  const Axis x = AxisOf(m, f.main[0], kLeft, kLeft + kPlotW);
  const Axis y = AxisOf(m, f.main[1], kTop + kPlotH, kTop);
  SvgWriter svg(kWidth, kHeight);
  svg.Text(kLeft, 28, std::string(title), "start", 15, "title");
  svg.Text(kLeft, 48,
           fmt::format("peak over {} x {}; budget {} ({} B){}", x.var, y.var, Bytes(f.budget),
                       f.budget, f.fits_box ? ": fits everywhere" : ""),
           "start", 11, "subtitle");
  DrawCells(svg, m, x, y);
  svg.Raw(fmt::format(R"(<rect class="plot-frame" x="{}" y="{}" width="{}" height="{}" )"
                      R"(fill="none" stroke="#000000"/>)"
                      "\n",
                      kLeft, kTop, kPlotW, kPlotH));
  DrawAxis(svg, x, f.ladders.at(x.var), true);
  DrawAxis(svg, y, f.ladders.at(y.var), false);
  DrawFrontier(svg, f, x, y);
  DrawLegend(svg, f.budget);
  return svg.Finish();
}

}  // namespace loadplan::render
