// Tests of the SVG memory timeline (well-formed, one rectangle per source, geometry)
// and of the Chrome trace (valid Trace Event Format, one named track per lane,
// no partially overlapping complete events on a track).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "base/bytes.h"
#include "cli/render/chrome_trace.h"
#include "cli/render/memory_series.h"
#include "cli/render/timeline_svg.h"
#include "simulator/planner/planner.h"
#include "tests/cli/render/sample_plan.h"
#include "tests/cli/render/xml_check.h"

namespace loadplan::render {
namespace {

using nlohmann::json;
using testing::kMiB;
using testing::ParseXml;
using testing::SamplePlan;
using testing::XmlDoc;
using testing::XmlElement;

std::vector<const XmlElement*> WithClass(const XmlDoc& doc, std::string_view name,
                                         std::string_view cls) {
  std::vector<const XmlElement*> out;
  for (const auto& el : doc.elements) {
    if (el.name == name && el.attrs.contains("class") && el.attrs.at("class") == cls)
      out.push_back(&el);
  }
  return out;
}

// The text of the <title> child of element `index` (its tooltip).
std::string TitleOf(const XmlDoc& doc, const XmlElement* el) {
  const size_t index = static_cast<size_t>(el - doc.elements.data());
  for (const auto& child : doc.elements) {
    if (child.name == "title" && child.parent == index) return child.text;
  }
  return "";
}

XmlDoc RenderSvg(const simulator::LoadPlan& plan) {
  base::Result<std::string> r = RenderTimelineSvg(plan);
  EXPECT_TRUE(r.ok()) << r.status().message();
  XmlDoc doc = ParseXml(r.ok() ? *r : std::string());
  EXPECT_EQ(doc.error, "");
  return doc;
}

TEST(TimelineSvgTest, OneRectanglePerSourceWithTooltips) {
  const XmlDoc doc = RenderSvg(SamplePlan());
  const auto rects = WithClass(doc, "rect", "source");
  ASSERT_EQ(rects.size(), 3u);
  std::set<std::string> titles;
  for (const auto* r : rects) titles.insert(TitleOf(doc, r));
  EXPECT_EQ(titles,
            (std::set<std::string>{
                "src a&b\nwindow [0, 2)  lane 0\n3.00 MiB (3145728 bytes) at offset 0 B",
                "src<2>\nwindow [0, 3)  lane 1\n1.00 MiB (1048576 bytes) at offset 3.00 MiB",
                "src'3\nwindow [1, 3)  lane 0\n2.00 MiB (2097152 bytes) at offset 4.00 MiB"}));
}

TEST(TimelineSvgTest, RectanglesSpanWindowsAndOffsets) {
  const XmlDoc doc = RenderSvg(SamplePlan());
  std::map<std::string, const XmlElement*> by_name;
  for (const auto* r : WithClass(doc, "rect", "source")) by_name[TitleOf(doc, r).substr(0, 6)] = r;
  auto num = [](const XmlElement* e, const char* a) { return std::stod(e->attrs.at(a)); };
  const XmlElement* a = by_name.at("src a&");   // [0, 2), offset 0, 3 MiB
  const XmlElement* b = by_name.at("src<2>");   // [0, 3), offset 3 MiB, 1 MiB
  const XmlElement* c = by_name.at("src'3\n");  // [1, 3), offset 4 MiB, 2 MiB
  EXPECT_NEAR(num(a, "width") / num(b, "width"), 2.0 / 3.0, 1e-3);
  EXPECT_NEAR(num(c, "x") - num(a, "x"), num(b, "width") / 3.0, 1e-2);
  EXPECT_NEAR(num(a, "height") / num(c, "height"), 3.0 / 2.0, 1e-3);
  // Offsets grow upwards: b sits on top of a (its bottom edge is a's top edge).
  EXPECT_NEAR(num(b, "y") + num(b, "height"), num(a, "y"), 1e-2);
}

TEST(TimelineSvgTest, MarksArenaAndLowerBoundAndStacksKinds) {
  const XmlDoc doc = RenderSvg(SamplePlan());
  EXPECT_EQ(WithClass(doc, "line", "arena-size").size(), 2u);  // one per panel
  EXPECT_EQ(WithClass(doc, "line", "lower-bound").size(), 2u);
  EXPECT_EQ(WithClass(doc, "path", "weights").size(), 1u);
  EXPECT_EQ(WithClass(doc, "path", "carries").size(), 1u);
  EXPECT_EQ(WithClass(doc, "path", "arena-live").size(), 1u);
  const auto columns = WithClass(doc, "rect", "column");
  ASSERT_EQ(columns.size(), 3u);  // one tooltip column per call
  // t = 1: resident 4 MiB (1 weight + 3 carries), all three sources live (6 MiB).
  EXPECT_NE(TitleOf(doc, columns[1]).find("arena live 6.00 MiB\ntotal 10.00 MiB"),
            std::string::npos)
      << TitleOf(doc, columns[1]);
}

// The texts of the elements of `name` and class `cls`, in document order.
std::vector<std::string> TextsOf(const std::vector<const XmlElement*>& els) {
  std::vector<std::string> out;
  for (const auto* e : els) out.push_back(e->text);
  return out;
}

double Num(const XmlElement* e, const char* attr) { return std::stod(e->attrs.at(attr)); }

// The vertical axis titles (rotated texts), memory panel first.
std::vector<std::string> AxisTitles(const XmlDoc& doc) {
  std::vector<std::string> out;
  for (const auto& el : doc.elements) {
    if (el.name == "text" && el.attrs.contains("transform")) out.push_back(el.text);
  }
  return out;
}

TEST(TimelineSvgTest, ByteAxesCountInTheUnitOfTheirTop) {
  EXPECT_EQ(AxisTitles(RenderSvg(SamplePlan())),
            (std::vector<std::string>{"MiB", "MiB"}));  // tops 10 MiB and 6 MiB
  std::string error;
  const std::optional<simulator::LoadPlan> small =
      testing::PlannedSmallManifest({.lanes = 1, .prefetch = 1}, error);
  ASSERT_TRUE(small.has_value()) << error;
  EXPECT_EQ(AxisTitles(RenderSvg(*small)), (std::vector<std::string>{"KiB", "KiB"}));
  simulator::LoadPlan empty;
  EXPECT_EQ(AxisTitles(RenderSvg(empty)), (std::vector<std::string>{"B", "B"}));
}

TEST(TimelineSvgTest, NamesTheStackedAreasOnThePicture) {
  const XmlDoc doc = RenderSvg(SamplePlan());
  const auto labels = WithClass(doc, "text", "area-label");
  EXPECT_EQ(TextsOf(labels), (std::vector<std::string>{"weights 1.00 MiB", "carries 3.00 MiB",
                                                       "arena live (peak 6.00 MiB)"}));
  const double right = Num(WithClass(doc, "line", "arena-size")[0], "x2");
  for (const auto* l : labels) EXPECT_LT(Num(l, "x"), right) << l->text;  // inside the plot
  // A weight of 1 byte is a band too thin for text: its name moves to the side column.
  simulator::LoadPlan thin = SamplePlan();
  thin.buffers[6].bytes = 1;
  const XmlDoc thin_doc = RenderSvg(thin);  // the labels point into it
  const auto thin_labels = WithClass(thin_doc, "text", "area-label");
  ASSERT_EQ(thin_labels.size(), 3u);
  for (const auto* l : thin_labels) {
    const bool side = Num(l, "x") > right;
    EXPECT_EQ(side, l->text.starts_with("weights")) << l->text;
  }
  EXPECT_EQ(thin_labels.back()->text, "weights 1 B");  // the side column comes last
}

TEST(TimelineSvgTest, NamesSourcesInsideTheirRectangles) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[4].name = std::string(300, 'n');  // wider than its rectangle [0, 3)
  const XmlDoc doc = RenderSvg(plan);
  const std::vector<std::string> names = TextsOf(WithClass(doc, "text", "source-label"));
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "src a&b");
  EXPECT_EQ(names[2], "src'3");
  const std::string ellipsis = "\xE2\x80\xA6";
  ASSERT_GT(names[1].size(), ellipsis.size());
  EXPECT_EQ(names[1].substr(names[1].size() - ellipsis.size()), ellipsis);
  const auto rects = WithClass(doc, "rect", "source");
  EXPECT_LE(6.0 * static_cast<double>(names[1].size() - ellipsis.size() + 1),
            Num(rects[1], "width"));
  // A source a few pixels tall gets no name.
  plan.buffers[4].bytes = 1024;
  EXPECT_EQ(WithClass(RenderSvg(plan), "text", "source-label").size(), 2u);
}

// The arena and lower-bound lines differ in colour and dashes; their labels stand apart.
void ExpectDistinctMarkers(const simulator::LoadPlan& plan) {
  const XmlDoc doc = RenderSvg(plan);
  const auto arena = WithClass(doc, "line", "arena-size");
  const auto bound = WithClass(doc, "line", "lower-bound");
  ASSERT_EQ(arena.size(), 2u);
  ASSERT_EQ(bound.size(), 2u);
  for (const char* attr : {"stroke", "stroke-dasharray"})
    EXPECT_NE(arena[0]->attrs.at(attr), bound[0]->attrs.at(attr)) << attr;
  const auto joint = WithClass(doc, "text", "arena-bound-label");
  const auto arena_labels = WithClass(doc, "text", "arena-size-label");
  const auto bound_labels = WithClass(doc, "text", "lower-bound-label");
  if (plan.arena_bytes == plan.lower_bound) {
    EXPECT_EQ(TextsOf(joint), (std::vector<std::string>{"+ arena = lower bound = 10.00 MiB",
                                                        "arena = lower bound = 6.00 MiB"}));
    EXPECT_TRUE(arena_labels.empty());
    return;
  }
  EXPECT_TRUE(joint.empty());
  ASSERT_EQ(arena_labels.size(), 2u);  // one per panel
  ASSERT_EQ(bound_labels.size(), 2u);
  for (size_t panel = 0; panel < 2; ++panel) {
    EXPECT_GE(std::abs(Num(arena_labels[panel], "y") - Num(bound_labels[panel], "y")), 10.0);
    EXPECT_LT(Num(arena_labels[panel], "y"), Num(bound_labels[panel], "y"));  // arena above
  }
}

TEST(TimelineSvgTest, ArenaAndLowerBoundLinesAreDistinctWhenEqual) {
  ExpectDistinctMarkers(SamplePlan());  // arena == lower bound == 6 MiB
}

TEST(TimelineSvgTest, ArenaAndLowerBoundLabelsDoNotOverlapOneByteApart) {
  simulator::LoadPlan plan = SamplePlan();
  plan.lower_bound = plan.arena_bytes - 1;
  ExpectDistinctMarkers(plan);
}

// The peak line runs through the middle of the column of the first t of largest arena
// live bytes, and its label quotes the plan's numbers.
void ExpectPeakMarked(const simulator::LoadPlan& plan) {
  const std::optional<MemorySeries> s = ComputeMemorySeries(plan);
  ASSERT_TRUE(s.has_value());
  ASSERT_FALSE(s->arena_live.empty());
  const auto t = static_cast<size_t>(std::max_element(s->arena_live.begin(), s->arena_live.end()) -
                                     s->arena_live.begin());
  const XmlDoc doc = RenderSvg(plan);
  const auto line = WithClass(doc, "line", "peak");
  const auto label = WithClass(doc, "text", "peak-label");
  const auto columns = WithClass(doc, "rect", "column");
  ASSERT_EQ(line.size(), 1u);
  ASSERT_EQ(label.size(), 1u);
  ASSERT_EQ(columns.size(), plan.calls.size());
  const double middle = Num(columns[t], "x") + Num(columns[t], "width") / 2;
  EXPECT_NEAR(Num(line[0], "x1"), middle, 0.011);
  EXPECT_EQ(line[0]->attrs.at("x1"), line[0]->attrs.at("x2"));
  const std::string total =
      base::FormatBytesAuto(s->weight_bytes + s->carry_bytes + s->peak_arena_live);
  EXPECT_NE(label[0]->text.find(total), std::string::npos) << label[0]->text;
  EXPECT_NE(label[0]->text.find("t = " + std::to_string(t) + " "), std::string::npos)
      << label[0]->text;
  EXPECT_NE(label[0]->text.find(CallLabel(plan.calls[t])), std::string::npos) << label[0]->text;
}

TEST(TimelineSvgTest, MarksThePeak) {
  simulator::LoadPlan plan = SamplePlan();
  ExpectPeakMarked(plan);                   // t = 1: 4 MiB resident + 6 MiB live
  const XmlDoc plan_doc = RenderSvg(plan);  // the labels point into it
  EXPECT_EQ(WithClass(plan_doc, "text", "peak-label")[0]->text,
            "peak 10.00 MiB at t = 1 (call derive.a#1)");
  plan.buffers[3].window_end = simulator::ClockTime{3};  // t = 1 and t = 2 both hold 6 MiB
  ExpectPeakMarked(plan);
  std::string error;
  const std::optional<simulator::LoadPlan> small =
      testing::PlannedSmallManifest({.lanes = 1, .prefetch = 2}, error);
  ASSERT_TRUE(small.has_value()) << error;
  ExpectPeakMarked(*small);
}

TEST(TimelineSvgTest, HostileNamesAndEmptyPlans) {
  simulator::LoadPlan plan = SamplePlan();
  plan.manifest_name = "</svg><x a=\"1\">&amp;";
  plan.buffers[3].name = std::string("nul\0\x01<&>\"'", 10);
  const XmlDoc doc = RenderSvg(plan);
  EXPECT_EQ(WithClass(doc, "rect", "source").size(), 3u);
  simulator::LoadPlan empty;
  empty.manifest_name = "empty";
  const XmlDoc doc2 = RenderSvg(empty);
  EXPECT_TRUE(WithClass(doc2, "rect", "source").empty());
  EXPECT_TRUE(WithClass(doc2, "line", "peak").empty());  // no calls: no peak
}

TEST(TimelineSvgTest, OverflowIsAnError) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[0].bytes = UINT64_MAX;  // a resident carry: weights + carries overflow
  EXPECT_FALSE(RenderTimelineSvg(plan).ok());
  EXPECT_FALSE(RenderChromeTrace(plan).ok());
}

json RenderTrace(const simulator::LoadPlan& plan) {
  base::Result<std::string> r = RenderChromeTrace(plan);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return json::parse(r.ok() ? *r : std::string("null"), nullptr, /*allow_exceptions=*/false);
}

// tid -> thread name, from the metadata events.
std::map<int, std::string> ThreadNames(const json& trace) {
  std::map<int, std::string> names;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names[e["tid"].get<int>()] = e["args"]["name"];
  }
  return names;
}

// Empty when every complete event is well-formed, on a named track, and no two events
// of one track overlap without nesting; else what is wrong.
std::string CheckCompleteEvents(const json& trace) {
  const auto names = ThreadNames(trace);
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> tracks;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    for (const char* key : {"name", "ts", "dur", "pid", "tid"}) {
      if (!e.contains(key)) return std::string("event without ") + key + ": " + e.dump();
    }
    const int tid = e["tid"].get<int>();
    if (!names.contains(tid)) return "event on an unnamed track: " + e.dump();
    tracks[tid].push_back(
        {e["ts"].get<int64_t>(), e["ts"].get<int64_t>() + e["dur"].get<int64_t>()});
  }
  for (auto& [tid, spans] : tracks) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].first < spans[i - 1].second && spans[i].second > spans[i - 1].second) {
        return "partially overlapping events on track " + names.at(tid);
      }
    }
  }
  return "";
}

TEST(ChromeTraceTest, IsTraceEventFormatWithOneTrackPerLane) {
  const json trace = RenderTrace(SamplePlan());
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  ASSERT_TRUE(trace["traceEvents"].is_array());
  const auto names = ThreadNames(trace);
  std::multiset<std::string> values;
  for (const auto& [tid, name] : names) values.insert(name);
  EXPECT_EQ(values.count("lane 0"), 1u);
  EXPECT_EQ(values.count("lane 1"), 1u);
  EXPECT_EQ(values.count("derive calls"), 1u);
  EXPECT_EQ(values.count("lane 0 (overlap 1)"),
            1u);  // src a&b [0, 2) and src'3 [1, 3) share lane 0
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(CheckCompleteEvents(trace), "");
}

TEST(ChromeTraceTest, EventsCarryNamesWindowsAndLanes) {
  const json trace = RenderTrace(SamplePlan());
  const auto names = ThreadNames(trace);
  std::map<std::string, json> sources;
  std::vector<std::string> calls;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "source") sources[e["name"]] = e;
    if (e["cat"] == "derive") calls.push_back(e["name"]);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"derive.a#0", "derive.a#1", "derive.b#0"}));
  ASSERT_EQ(sources.size(), 3u);
  const json& b = sources.at("src<2>");
  EXPECT_EQ(b["ts"], 0);
  EXPECT_EQ(b["dur"], 3);
  EXPECT_EQ(names.at(b["tid"].get<int>()), "lane 1");
  EXPECT_EQ(b["args"]["bytes"], kMiB);
  EXPECT_EQ(sources.at("src'3")["ts"], 1);
  EXPECT_TRUE(sources.contains("src a&b"));
}

TEST(ChromeTraceTest, InvalidUtf8NamesDoNotBreakTheJson) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[3].name = "bad \xff\xfe utf8 \"<&>\"";
  const json trace = RenderTrace(plan);
  ASSERT_FALSE(trace.is_discarded());
  EXPECT_EQ(CheckCompleteEvents(trace), "");
}

// Random small plans: sources with random windows, lanes, sizes and offsets.
simulator::LoadPlan RandomPlan() {
  simulator::LoadPlan plan;
  plan.manifest_name = *rc::gen::arbitrary<std::string>();
  plan.lanes = *rc::gen::inRange<uint32_t>(1, 4);
  const uint32_t calls = *rc::gen::inRange<uint32_t>(0, 8);
  for (uint32_t t = 0; t < calls; ++t) {
    plan.calls.push_back(
        {.id = simulator::CallId{t}, .program = "p", .call_in_program = t, .ptr = ""});
  }
  const int sources = *rc::gen::inRange(0, 10);
  for (int i = 0; i < sources; ++i) {
    simulator::PlannedBuffer b;
    b.name = *rc::gen::arbitrary<std::string>();
    b.kind = verifier::BufferKind::kSource;
    b.residence = simulator::Residence::kStaged;
    b.bytes = *rc::gen::inRange<uint64_t>(0, 4ull << 30);
    b.offset = *rc::gen::inRange<uint64_t>(0, 4ull << 30);
    b.id = simulator::BufferId{static_cast<uint32_t>(plan.buffers.size())};
    b.lane = simulator::Lane{*rc::gen::inRange<uint32_t>(0, plan.lanes)};
    const uint32_t begin = *rc::gen::inRange<uint32_t>(0, calls + 1);
    b.window_begin = simulator::ClockTime{begin};
    b.window_end = simulator::ClockTime{*rc::gen::inRange<uint32_t>(begin, calls + 1)};
    plan.arena_bytes = std::max(plan.arena_bytes, b.offset + b.bytes);
    plan.buffers.push_back(std::move(b));
  }
  return plan;
}

// The real planner's plan of a small manifest, with one lane and prefetch 2 (so the
// lane's windows overlap and the lane needs overlap rows).
TEST(ChromeTraceTest, RendersThePlannersPlan) {
  std::string error;
  const std::optional<simulator::LoadPlan> planned =
      testing::PlannedSmallManifest({.lanes = 1, .prefetch = 2}, error);
  ASSERT_TRUE(planned.has_value()) << error;
  const simulator::LoadPlan& plan = *planned;
  size_t staged = 0;
  for (const auto& b : plan.buffers) staged += b.residence == simulator::Residence::kStaged;
  ASSERT_EQ(staged, 3u);
  const json trace = RenderTrace(plan);
  EXPECT_EQ(CheckCompleteEvents(trace), "");
  size_t sources = 0, calls = 0;
  for (const auto& e : trace["traceEvents"]) {
    sources += e["ph"] == "X" && e["cat"] == "source";
    calls += e["ph"] == "X" && e["cat"] == "derive";
  }
  EXPECT_EQ(sources, staged);
  EXPECT_EQ(calls, plan.calls.size());
  const XmlDoc doc = RenderSvg(plan);
  EXPECT_EQ(WithClass(doc, "rect", "source").size(), staged);
  EXPECT_EQ(WithClass(doc, "rect", "column").size(), plan.calls.size());
  const auto names = ThreadNames(trace);
  EXPECT_EQ(std::count_if(names.begin(), names.end(),
                          [](const auto& kv) { return kv.second == "lane 0"; }),
            1);
  EXPECT_GT(names.size(), 2u);  // derive calls, lane 0 and at least one overlap row
}

RC_GTEST_PROP(RenderProperties, TraceTracksAreNamedAndNeverOverlapPartially, ()) {
  const simulator::LoadPlan plan = RandomPlan();
  base::Result<std::string> r = RenderChromeTrace(plan);
  RC_ASSERT(r.ok());
  const json trace = json::parse(*r, nullptr, false);
  RC_ASSERT(!trace.is_discarded());
  RC_ASSERT(CheckCompleteEvents(trace) == "");
  std::multiset<std::string> names;
  for (const auto& [tid, name] : ThreadNames(trace)) names.insert(name);
  for (uint32_t lane = 0; lane < plan.lanes; ++lane)
    RC_ASSERT(names.count("lane " + std::to_string(lane)) == 1u);
  size_t source_events = 0;
  for (const auto& e : trace["traceEvents"])
    source_events += e["ph"] == "X" && e["cat"] == "source";
  RC_ASSERT(source_events == plan.buffers.size());
}

RC_GTEST_PROP(RenderProperties, SvgIsWellFormedWithOneRectPerSource, ()) {
  const simulator::LoadPlan plan = RandomPlan();
  base::Result<std::string> r = RenderTimelineSvg(plan);
  RC_ASSERT(r.ok());
  const XmlDoc doc = ParseXml(*r);
  RC_ASSERT(doc.error == "");
  RC_ASSERT(WithClass(doc, "rect", "source").size() == plan.buffers.size());
}

}  // namespace
}  // namespace loadplan::render
