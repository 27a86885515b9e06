// Tests of the capacity picture: well-formed SVG, the frontier points drawn are exactly the
// frontier's limits (table, pinned value, largest), log2 axes, cells coloured by the budget.
#include "cli/render/capacity_svg.h"

#include <set>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "tests/cli/render/xml_check.h"

namespace loadplan::render {
namespace {

namespace cap = simulator::capacity;
using testing::ParseXml;
using testing::XmlDoc;

cap::PeakModel GptOss(int64_t budget) {
  const base::Result<verifier::Expr> serve = verifier::ParseExpr(
      "36864 * batch * ctx + 36864 * batch * min(ctx, 128) + 815912 * batch + 68071456768");
  return cap::PeakModel{.phases = {verifier::Expr::Const(69201821696), *serve},
                        .box = {{"batch", {1, 256}}, {"ctx", {1, 131072}}},
                        .budget = budget,
                        .proof = {}};
}

using PointKey = std::tuple<std::string, std::string, int64_t, std::string, int64_t>;

std::set<PointKey> Drawn(const XmlDoc& doc) {
  std::set<PointKey> out;
  for (const auto& el : doc.elements) {
    if (el.name != "circle" || el.attrs.at("class") != "frontier-point") continue;
    out.insert({el.attrs.at("data-table"), el.attrs.at("data-pinned"),
                std::stoll(el.attrs.at("data-pinned-value")), el.attrs.at("data-var"),
                std::stoll(el.attrs.at("data-largest"))});
  }
  return out;
}

std::set<PointKey> Expected(const cap::Frontier& f) {
  std::set<PointKey> out;
  for (size_t t = 0; t < f.tables.size(); ++t) {
    for (const cap::Limit& l : f.tables[t].rows) {
      if (!l.largest) continue;
      out.insert({std::to_string(t), f.tables[t].pinned, l.pinned.at(f.tables[t].pinned), l.var,
                  *l.largest});
    }
  }
  return out;
}

size_t Count(const XmlDoc& doc, std::string_view name, std::string_view cls) {
  size_t n = 0;
  for (const auto& el : doc.elements)
    n += el.name == name && el.attrs.contains("class") && el.attrs.at("class") == cls;
  return n;
}

TEST(CapacitySvg, FrontierPointsAreTheFrontiersLimits) {
  const cap::PeakModel m = GptOss(150109106995);
  const cap::Frontier f = cap::ComputeFrontier(m);
  const base::Result<std::string> svg = RenderCapacitySvg(m, f, "gpt-oss-120b on h200");
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  const XmlDoc doc = ParseXml(*svg);
  ASSERT_EQ(doc.error, "");
  const std::set<PointKey> drawn = Drawn(doc);
  EXPECT_EQ(drawn, Expected(f));
  EXPECT_EQ(drawn.size(), f.ladders.at("ctx").size() + f.ladders.at("batch").size());
  EXPECT_EQ(Count(doc, "polyline", "frontier"), 1u);
  EXPECT_EQ(Count(doc, "rect", "cell"), 40u * 30u);
  EXPECT_NE(svg->find("ctx (log2 scale)"), std::string::npos);
  EXPECT_NE(svg->find("= budget"), std::string::npos);
}

// Nothing fits: no frontier point, no line; every cell over the budget is not green.
TEST(CapacitySvg, NothingFitsDrawsNoPoints) {
  const cap::PeakModel m = GptOss(int64_t{60} << 30);
  const base::Result<std::string> svg = RenderCapacitySvg(m, cap::ComputeFrontier(m), "none");
  ASSERT_TRUE(svg.ok());
  const XmlDoc doc = ParseXml(*svg);
  ASSERT_EQ(doc.error, "");
  EXPECT_TRUE(Drawn(doc).empty());
  EXPECT_EQ(Count(doc, "polyline", "frontier"), 0u);
}

TEST(CapacitySvg, OneVariableIsAnError) {
  const cap::PeakModel m{.phases = {verifier::Expr::Var("batch")},
                         .box = {{"batch", {1, 8}}},
                         .budget = 4,
                         .proof = {}};
  const base::Result<std::string> svg = RenderCapacitySvg(m, cap::ComputeFrontier(m), "x");
  EXPECT_FALSE(svg.ok());
}

}  // namespace
}  // namespace loadplan::render
