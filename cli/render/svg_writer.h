// A minimal SVG text builder for the timeline: escaped text, linear scales, nice ticks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loadplan::render {

// Maps a value range [v0, v1] onto a pixel range [p0, p1] (p1 < p0 for upward y).
struct Scale {
  double v0 = 0, v1 = 1, p0 = 0, p1 = 1;
  [[nodiscard]] double operator()(double v) const;
};

// Tick values from 0 to at least `max` with a 1/2/5 x 10^k step, about `target` of them.
struct Ticks {
  std::vector<double> values;
  int decimals = 0;  // digits after the point that the step needs
};
Ticks NiceTicks(double max, int target);

// The unit a byte axis counts in, chosen by the axis's top value (powers of 2):
// B below 1 KiB, KiB below 1 MiB, MiB below 1 GiB, GiB from there on.
struct ByteUnit {
  std::string_view name;  // "B", "KiB", "MiB", "GiB"
  double bytes = 1;       // bytes per unit
};
ByteUnit PickByteUnit(uint64_t top);

// `text` cut to at most `max_chars` characters (UTF-8 code points), the last of them
// an ellipsis when it was cut; empty when not even one character and the ellipsis fit.
std::string FitText(std::string_view text, size_t max_chars);

// Baselines for labels that want the baselines `wanted` (ascending), at least `gap` apart:
// labels that would crowd each other spread evenly around the mean of what they want.
std::vector<double> SpreadLabels(const std::vector<double>& wanted, double gap);

// Accumulates SVG elements; every string argument is escaped here.
class SvgWriter {
 public:
  SvgWriter(double width, double height);
  // A rectangle; `cls` is its class, `tooltip` (if not empty) a <title> child.
  void Rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls,
            std::string_view tooltip = {});
  // `dash` (if not empty) is a stroke-dasharray; `width` the stroke width (1: not written).
  void Line(double x0, double y0, double x1, double y1, std::string_view stroke,
            std::string_view cls, std::string_view dash = {}, double width = 1);
  // anchor: "start" | "middle" | "end".
  void Text(double x, double y, std::string_view text, std::string_view anchor = "start",
            int size = 11, std::string_view cls = "label", std::string_view fill = {});
  // Text turned 90 degrees anticlockwise about its anchor (a vertical axis title).
  void VerticalText(double x, double y, std::string_view text, int size = 11,
                    std::string_view cls = "label");
  void Path(std::string_view d, std::string_view fill, std::string_view cls,
            std::string_view tooltip = {});
  void Raw(std::string_view xml) { body_ += xml; }
  [[nodiscard]] std::string Finish() const;

 private:
  double width_, height_;
  std::string body_;
};

}  // namespace loadplan::render
