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

// Accumulates SVG elements; every string argument is escaped here.
class SvgWriter {
 public:
  SvgWriter(double width, double height);
  // A rectangle; `cls` is its class, `tooltip` (if not empty) a <title> child.
  void Rect(double x, double y, double w, double h, std::string_view fill, std::string_view cls,
            std::string_view tooltip = {});
  void Line(double x0, double y0, double x1, double y1, std::string_view stroke,
            std::string_view cls, std::string_view dash = {});
  // anchor: "start" | "middle" | "end".
  void Text(double x, double y, std::string_view text, std::string_view anchor = "start",
            int size = 11, std::string_view cls = "label");
  void Path(std::string_view d, std::string_view fill, std::string_view cls,
            std::string_view tooltip = {});
  void Raw(std::string_view xml) { body_ += xml; }
  [[nodiscard]] std::string Finish() const;

 private:
  double width_, height_;
  std::string body_;
};

}  // namespace loadplan::render
