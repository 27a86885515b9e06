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

ByteUnit PickByteUnit(uint64_t top) {
  if (top < (1ull << 10)) return {"B", 1.0};
  if (top < (1ull << 20)) return {"KiB", 1024.0};
  if (top < (1ull << 30)) return {"MiB", 1024.0 * 1024.0};
  return {"GiB", 1024.0 * 1024.0 * 1024.0};
}

namespace {

bool StartsCodePoint(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

// The byte offset where code point `n` of `text` starts (text.size() when it has fewer).
size_t CodePointOffset(std::string_view text, size_t n) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (StartsCodePoint(text[i]) && n-- == 0) return i;
  }
  return text.size();
}

}  // namespace

std::string FitText(std::string_view text, size_t max_chars) {
  if (CodePointOffset(text, max_chars) == text.size()) return std::string(text);
  if (max_chars < 2) return "";
  return std::string(text.substr(0, CodePointOffset(text, max_chars - 1))) +
         "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
}

std::vector<double> SpreadLabels(const std::vector<double>& wanted, double gap) {
  struct Cluster {
    size_t count;
    double wanted_sum, first;  // first: the baseline of the cluster's first label
  };
  std::vector<Cluster> clusters;
  for (const double w : wanted) {
    clusters.push_back({1, w, w});
    while (clusters.size() > 1) {
      Cluster& prev = clusters[clusters.size() - 2];
      const Cluster& last = clusters.back();
      if (last.first >= prev.first + static_cast<double>(prev.count) * gap) break;
      prev.count += last.count;
      prev.wanted_sum += last.wanted_sum;
      const double n = static_cast<double>(prev.count);
      prev.first = prev.wanted_sum / n - (n - 1) * gap / 2;
      clusters.pop_back();
    }
  }
  std::vector<double> out;
  for (const Cluster& c : clusters) {
    for (size_t i = 0; i < c.count; ++i) out.push_back(c.first + static_cast<double>(i) * gap);
  }
  return out;
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
                     std::string_view cls, std::string_view dash, double width) {
  fmt::format_to(
      std::back_inserter(body_),
      R"(<line class="{}" x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}"{}{}/>)"
      "\n",
      XmlEscape(cls), x0, y0, x1, y1, XmlEscape(stroke),
      dash.empty() ? "" : fmt::format(R"( stroke-dasharray="{}")", XmlEscape(dash)),
      width == 1 ? "" : fmt::format(R"( stroke-width="{:.2f}")", width));
}

void SvgWriter::Text(double x, double y, std::string_view text, std::string_view anchor, int size,
                     std::string_view cls, std::string_view fill) {
  fmt::format_to(
      std::back_inserter(body_),
      R"(<text class="{}" x="{:.2f}" y="{:.2f}" text-anchor="{}" font-size="{}"{}>{}</text>)"
      "\n",
      XmlEscape(cls), x, y, XmlEscape(anchor), size,
      fill.empty() ? "" : fmt::format(R"( fill="{}")", XmlEscape(fill)), XmlEscape(text));
}

void SvgWriter::VerticalText(double x, double y, std::string_view text, int size,
                             std::string_view cls) {
  fmt::format_to(std::back_inserter(body_),
                 R"(<text class="{}" x="{:.2f}" y="{:.2f}" font-size="{}" text-anchor="middle" )"
                 R"svg(transform="rotate(-90 {:.2f} {:.2f})">{}</text>)svg"
                 "\n",
                 XmlEscape(cls), x, y, size, x, y, XmlEscape(text));
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
