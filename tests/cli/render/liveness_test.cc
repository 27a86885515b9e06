// Tests of the liveness view: the row model (layer groups, bars per residence, collapsing)
// and the SVG (well-formed, one bar per buffer, the widest moment and the peak marked with
// the plan's own numbers).
#include "cli/render/liveness_svg.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "cli/render/liveness_rows.h"
#include "simulator/phases/phases.h"
#include "tests/cli/render/sample_plan.h"
#include "tests/cli/render/xml_check.h"

namespace loadplan::render {
namespace {

using simulator::BufferId;
using testing::kMiB;
using testing::ParseXml;
using testing::SamplePlan;
using testing::XmlDoc;
using testing::XmlElement;

std::vector<const XmlElement*> ByClass(const XmlDoc& doc, std::string_view cls) {
  std::vector<const XmlElement*> out;
  for (const XmlElement& el : doc.elements)
    if (el.attrs.contains("class") && el.attrs.at("class") == cls) out.push_back(&el);
  return out;
}

XmlDoc Render(const simulator::LoadPlan& plan, const LivenessOptions& options = {}) {
  const base::Result<std::string> svg = RenderLivenessSvg(plan, options);
  EXPECT_TRUE(svg.ok()) << svg.status().message();
  XmlDoc doc = ParseXml(svg.ok() ? *svg : std::string());
  EXPECT_EQ(doc.error, "");
  return doc;
}

TEST(LayerGroupTest, TheFirstPartEndingInADigit) {
  EXPECT_EQ(LayerGroup("l3.fc1_w"), "l3");
  EXPECT_EQ(LayerGroup("l12.fc1_w.raw"), "l12");
  EXPECT_EQ(LayerGroup("model.layers.12.mlp.experts.gate_up_proj"), "model.layers.12");
  EXPECT_EQ(LayerGroup("blk.0.attn_q.weight"), "blk.0");
  EXPECT_EQ(LayerGroup("embed"), "model");
  EXPECT_EQ(LayerGroup("lm_head.weight"), "model");
  EXPECT_EQ(LayerGroup("l3"), "model");  // no part after it: a name, not a layer
  EXPECT_EQ(LayerGroup(""), "model");
  EXPECT_EQ(LayerGroup("a..b"), "model");
}

TEST(LiveModelTest, BarsFollowResidence) {
  const simulator::LoadPlan plan = SamplePlan();
  const std::optional<LiveModel> m = BuildLiveModel(plan, RowMode::kBuffers);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->clock_end, 3u);
  EXPECT_FALSE(m->collapsed);
  ASSERT_EQ(m->rows.size(), 7u);  // every buffer: 3 sources, 2 carries, 1 weight, kv
  std::vector<std::string> labels;
  for (const LiveRow& r : m->rows) labels.push_back(r.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"src a&b", "src<2>", "src'3", "Carry \"one\" <&>",
                                              "carry2", "w \\ 1", "kv"}));
  EXPECT_EQ(m->rows[0].bars, (std::vector<LiveBar>{{BufferId{3}, 0, 2}}));
  EXPECT_EQ(m->rows[2].bars, (std::vector<LiveBar>{{BufferId{5}, 1, 3}}));
  EXPECT_EQ(m->rows[3].bars, (std::vector<LiveBar>{{BufferId{0}, 0, 4}}));  // load and serve
  EXPECT_EQ(m->rows[6].bars, (std::vector<LiveBar>{{BufferId{2}, 3, 4}}));  // serve only
  ASSERT_TRUE(m->widest);
  EXPECT_EQ(simulator::Index(m->widest->time), 1u);
  for (size_t r = 0; r < 3; ++r) EXPECT_TRUE(m->rows[r].live_at_widest) << r;
  for (size_t r = 3; r < 7; ++r) EXPECT_FALSE(m->rows[r].live_at_widest) << r;
}

TEST(LiveModelTest, CollapsesIntoOneRowPerLayerPastTheLimit) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[3].name = "l1.src";
  plan.buffers[4].name = "l0.src";
  plan.buffers[6].name = "l10.w";
  const std::optional<LiveModel> m = BuildLiveModel(plan, RowMode::kAuto, 5);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->collapsed);
  std::vector<std::string> labels;
  for (const LiveRow& r : m->rows) labels.push_back(r.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"model", "l0", "l1", "l10"}));  // natural order
  EXPECT_EQ(m->rows[0].bars.size(), 4u);  // src'3, two carries, kv
  EXPECT_EQ(m->rows[0].bytes, 2 * kMiB + 2 * kMiB + kMiB + 8 * kMiB);
  EXPECT_EQ(BuildLiveModel(plan, RowMode::kAuto, 7)->collapsed, false);
  EXPECT_EQ(BuildLiveModel(plan, RowMode::kGroups, 100)->collapsed, true);
}

TEST(LiveModelTest, PeerAndSkippedBuffersGetNoBar) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[1].residence = simulator::Residence::kPeer;
  plan.buffers[2].residence = simulator::Residence::kSkipped;
  EXPECT_EQ(BuildLiveModel(plan, RowMode::kBuffers)->rows.size(), 5u);
}

TEST(LiveModelTest, AnOverflowingSumIsAnError) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[0].bytes = UINT64_MAX;
  EXPECT_FALSE(BuildLiveModel(plan, RowMode::kGroups));
  EXPECT_FALSE(RenderLivenessSvg(plan, {.rows = RowMode::kGroups}).ok());
}

TEST(LivenessSvgTest, OneBarPerBufferWithEscapedTooltips) {
  const XmlDoc doc = Render(SamplePlan(), {.rows = RowMode::kBuffers});
  size_t bars = 0;
  bool escaped_name = false;
  for (const XmlElement& el : doc.elements) {
    if (el.name == "rect" && el.attrs.contains("class") && el.attrs.at("class").starts_with("bar "))
      ++bars;
    if (el.name == "title" && el.text.starts_with("Carry \"one\" <&>\ncarry")) escaped_name = true;
  }
  EXPECT_EQ(bars, 7u);
  EXPECT_TRUE(escaped_name);
  EXPECT_EQ(ByClass(doc, "row-label live").size(), 3u);  // the live set is named in its rows
}

TEST(LivenessSvgTest, TheWidestMomentIsThePlans) {
  const simulator::LoadPlan plan = SamplePlan();
  const std::optional<simulator::WidestMoment> w = simulator::FindWidestMoment(plan);
  ASSERT_TRUE(w);
  const XmlDoc doc = Render(plan);
  const auto band = ByClass(doc, "widest");
  ASSERT_EQ(band.size(), 1u);
  EXPECT_EQ(band[0]->attrs.at("data-call"), std::to_string(simulator::Index(w->time)));
  EXPECT_EQ(band[0]->attrs.at("data-bytes"), std::to_string(w->bytes));
  const auto label = ByClass(doc, "widest-label");
  ASSERT_EQ(label.size(), 1u);
  EXPECT_NE(label[0]->text.find("t = 1 (derive.a#1)"), std::string::npos) << label[0]->text;
  EXPECT_NE(label[0]->text.find(base::FormatBytesAuto(w->bytes)), std::string::npos);
  const auto live = ByClass(doc, "widest-live");
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0]->text, "live: src a&b, src<2>, src'3");
}

TEST(LivenessSvgTest, ThePeakIsTheLargestPhase) {
  const LivenessOptions options{
      .phases = {{"load", 10 * kMiB, ""}, {"once", 4 * kMiB, ""}, {"serve", 12 * kMiB, "batch=8"}}};
  const XmlDoc doc = Render(SamplePlan(), options);
  const auto peak = ByClass(doc, "peak-label");
  ASSERT_EQ(peak.size(), 1u);
  EXPECT_EQ(peak[0]->attrs.at("data-phase"), "serve");
  EXPECT_EQ(peak[0]->attrs.at("data-bytes"), std::to_string(12 * kMiB));
  const auto line = ByClass(doc, "phase-peaks");
  ASSERT_EQ(line.size(), 1u);
  EXPECT_NE(line[0]->text.find("serve 12.00 MiB at batch=8"), std::string::npos) << line[0]->text;
}

TEST(LivenessSvgTest, NothingStagedSaysSo) {
  simulator::LoadPlan plan = SamplePlan();
  for (simulator::PlannedBuffer& b : plan.buffers)
    if (b.residence == simulator::Residence::kStaged) b.residence = simulator::Residence::kSkipped;
  plan.arrival.clear();
  const XmlDoc doc = Render(plan);
  EXPECT_TRUE(ByClass(doc, "widest").empty());
  const auto label = ByClass(doc, "widest-label");
  ASSERT_EQ(label.size(), 1u);
  EXPECT_NE(label[0]->text.find("nothing is staged"), std::string::npos);
}

TEST(LivenessSvgTest, AnEmptyPlanRenders) {
  const XmlDoc doc = Render(simulator::LoadPlan{});
  EXPECT_FALSE(doc.elements.empty());
}

}  // namespace
}  // namespace loadplan::render
