// A minimal SVG text builder: every attribute and text node goes through XmlEscape.
#include "cli/render/svg_writer.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "cli/render/xml_escape.h"

namespace loadplan::render {

double Scale::operator()(double v) const {
  if (v1 == v0) return p0;
  return p0 + (v - v0) / (v1 - v0) * (p1 - p0);
}

Ticks NiceTicks(double max, int target) {
  Ticks ticks;
  if (!(max > 0) || target < 1) {
    ticks.values = {0.0};
    return ticks;
  }
  const double raw = max / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  ticks.decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step))), 0, 9);
  for (int i = 0; i * step < max + step * 0.999 && i <= 10 * target; ++i)
    ticks.values.push_back(i * step);
  return ticks;
}

SvgWriter::SvgWriter(double width, double height) : width_(width), height_(height) {}

void SvgWriter::Rect(double x, double y, double w, double h, std::string_view fill,
                     std::string_view cls, std::string_view tooltip) {
  auto out = std::back_inserter(body_);
  fmt::format_to(
      out, R"(<rect class="{}" x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}")",
      XmlEscape(cls), x, y, std::max(w, 0.0), std::max(h, 0.0), XmlEscape(fill));
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    fmt::format_to(out, "><title>{}</title></rect>\n", XmlEscape(tooltip));
  }
}

void SvgWriter::Line(double x0, double y0, double x1, double y1, std::string_view stroke,
                     std::string_view cls, std::string_view dash) {
  fmt::format_to(
      std::back_inserter(body_),
      R"(<line class="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}"{}/>)"
      "\n",
      XmlEscape(cls), x0, y0, x1, y1, XmlEscape(stroke),
      dash.empty() ? "" : fmt::format(R"( stroke-dasharray="{}")", XmlEscape(dash)));
}

void SvgWriter::Text(double x, double y, std::string_view text, std::string_view anchor, int size,
                     std::string_view cls) {
  fmt::format_to(
      std::back_inserter(body_),
      R"(<text class="{}" x="{:.2f}" y="{:.2f}" text-anchor="{}" font-size="{}">{}</text>)"
      "\n",
      XmlEscape(cls), x, y, XmlEscape(anchor), size, XmlEscape(text));
}

void SvgWriter::Path(std::string_view d, std::string_view fill, std::string_view cls,
                     std::string_view tooltip) {
  auto out = std::back_inserter(body_);
  fmt::format_to(out, R"(<path class="{}" d="{}" fill="{}" stroke="#555555" stroke-width="0.5")",
                 XmlEscape(cls), XmlEscape(d), XmlEscape(fill));
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    fmt::format_to(out, "><title>{}</title></path>\n", XmlEscape(tooltip));
  }
}

std::string SvgWriter::Finish() const {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<style>rect.source {{ stroke: #333333; stroke-width: 0.5; fill-opacity: 0.85 }}</style>\n"
      "<rect class=\"background\" x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "fill=\"#ffffff\"/>\n"
      "{2}</svg>\n",
      width_, height_, body_);
}

}  // namespace loadplan::render
