// Tests of the liveness graph: the DOT text is parsed back with cgraph and its nodes,
// edges, clusters and attributes are checked; the SVG is checked for well-formedness.
#include "cli/render/graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <graphviz/cgraph.h>
#include <gtest/gtest.h>

#include "simulator/planner/planner.h"
#include "tests/cli/render/sample_plan.h"
#include "tests/cli/render/xml_check.h"

namespace loadplan::render {
namespace {

using testing::ParseXml;
using testing::SamplePlan;

struct GraphCloser {
  void operator()(Agraph_t* g) const { agclose(g); }
};
using Parsed = std::unique_ptr<Agraph_t, GraphCloser>;

Parsed ParseDot(const simulator::LoadPlan& plan) {
  base::Result<std::string> r = RenderGraph(plan, GraphFormat::kDot);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return nullptr;
  Parsed g(agmemread(r->c_str()));
  EXPECT_NE(g, nullptr) << "DOT does not parse back:\n" << *r;
  return g;
}

std::string Get(void* obj, const char* attr) {
  std::string a = attr;
  const char* v = agget(obj, a.data());
  return v == nullptr ? "" : v;
}

Agnode_t* Node(Agraph_t* g, const std::string& name) {
  std::string n = name;
  return agnode(g, n.data(), 0);
}

int CountEdges(Agraph_t* g, const std::string& cls) {
  int count = 0;
  for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
    for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e))
      count += Get(e, "class") == cls;
  }
  return count;
}

TEST(GraphTest, DotHasEveryNodeEdgeAndCluster) {
  Parsed g = ParseDot(SamplePlan());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(agnnodes(g.get()), 9);  // 6 buffers (kv is serve-time) + 3 calls
  EXPECT_EQ(agnedges(g.get()), 10);
  EXPECT_EQ(CountEdges(g.get(), "read"), 7);
  EXPECT_EQ(CountEdges(g.get(), "write"), 3);
  EXPECT_EQ(Node(g.get(), "b:kv"), nullptr);
  std::map<std::string, int> clusters;
  for (Agraph_t* s = agfstsubg(g.get()); s != nullptr; s = agnxtsubg(s))
    clusters[agnameof(s)] = agnnodes(s);
  EXPECT_EQ(clusters,
            (std::map<std::string, int>{{"cluster_derive.a", 2}, {"cluster_derive.b", 1}}));
}

TEST(GraphTest, EdgesConnectTheRightEnds) {
  Parsed g = ParseDot(SamplePlan());
  ASSERT_NE(g, nullptr);
  Agnode_t* src3 = Node(g.get(), "b:src'3");
  Agnode_t* carry = Node(g.get(), "b:Carry \"one\" <&>");
  Agnode_t* call0 = Node(g.get(), "c:0");
  Agnode_t* call2 = Node(g.get(), "c:2");
  ASSERT_TRUE(src3 && carry && call0 && call2);
  Agedge_t* read = agedge(g.get(), src3, call2, nullptr, 0);
  Agedge_t* write = agedge(g.get(), call0, carry, nullptr, 0);
  ASSERT_TRUE(read && write);
  EXPECT_EQ(Get(read, "class"), "read");
  EXPECT_EQ(Get(write, "class"), "write");
  EXPECT_NE(Get(read, "style"), Get(write, "style"));
  EXPECT_EQ(agedge(g.get(), call2, src3, nullptr, 0), nullptr);  // sources are never written
  EXPECT_EQ(agdegree(g.get(), carry, 1, 1), 3);                  // written by c0, c1; read by c2
}

TEST(GraphTest, NodesCarryKindColourAndEscapedHtmlLabels) {
  Parsed g = ParseDot(SamplePlan());
  ASSERT_NE(g, nullptr);
  Agnode_t* src = Node(g.get(), "b:src a&b");
  Agnode_t* weight = Node(g.get(), "b:w %5C 1");  // backslash percent-encoded in the id
  ASSERT_TRUE(src && weight);
  EXPECT_EQ(Get(src, "class"), "source");
  EXPECT_EQ(Get(weight, "class"), "weight");
  EXPECT_NE(Get(src, "fillcolor"), Get(weight, "fillcolor"));
  char* label = agget(src, const_cast<char*>("label"));
  ASSERT_NE(label, nullptr);
  EXPECT_TRUE(aghtmlstr(label));
  const std::string text = label;
  EXPECT_NE(text.find("src a&amp;b"), std::string::npos) << text;
  EXPECT_NE(text.find("window [0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("lane 0"), std::string::npos) << text;
  EXPECT_NE(text.find("3.00 MiB"), std::string::npos) << text;
}

TEST(GraphTest, HostileNamesRoundTrip) {
  simulator::LoadPlan plan = SamplePlan();
  plan.buffers[3].name = "ends in backslash\\";
  plan.buffers[4].name = std::string("nul\0byte \"q\" \\N \n<b>&amp;", 25);
  plan.buffers[5].name = "%5C";  // must not collide with an encoded backslash
  plan.buffers[1].name = "";     // empty names are ids too
  plan.calls[2].program = "derive.\"b\" <&> \\";
  plan.manifest_name = "<script>&\\";
  Parsed g = ParseDot(plan);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(agnnodes(g.get()), 9);
  EXPECT_EQ(agnedges(g.get()), 10);
  EXPECT_NE(Node(g.get(), "b:ends in backslash%5C"), nullptr);
  EXPECT_NE(Node(g.get(), "b:%255C"), nullptr);
  int clusters = 0;
  for (Agraph_t* s = agfstsubg(g.get()); s != nullptr; s = agnxtsubg(s)) ++clusters;
  EXPECT_EQ(clusters, 2);
  base::Result<std::string> svg = RenderGraph(plan, GraphFormat::kSvg);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_EQ(ParseXml(*svg).error, "");
}

TEST(GraphTest, SvgIsWellFormedWithOneNodeGroupPerNode) {
  for (int round = 0; round < 2; ++round) {  // the shared context serves repeated renders
    base::Result<std::string> r = RenderGraph(SamplePlan(), GraphFormat::kSvg);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const testing::XmlDoc doc = ParseXml(*r);
    ASSERT_EQ(doc.error, "");
    int nodes = 0, edges = 0, clusters = 0;
    for (const auto& el : doc.elements) {
      if (el.name != "g" || !el.attrs.contains("class")) continue;
      const std::string& cls = el.attrs.at("class");
      nodes += cls.starts_with("node");
      edges += cls.starts_with("edge");
      clusters += cls.starts_with("cluster");
    }
    EXPECT_EQ(nodes, 9);
    EXPECT_EQ(edges, 10);
    EXPECT_EQ(clusters, 2);
  }
}

TEST(GraphTest, EmptyPlanRenders) {
  simulator::LoadPlan plan;
  plan.manifest_name = "empty";
  Parsed g = ParseDot(plan);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(agnnodes(g.get()), 0);
}

TEST(GraphTest, OutOfRangeBufferIndexIsAnError) {
  simulator::LoadPlan plan = SamplePlan();
  plan.calls[1].reads.push_back(simulator::BufferId{99});
  base::Result<std::string> r = RenderGraph(plan, GraphFormat::kDot);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("99"), std::string::npos) << r.status().message();
}

size_t UniqueCount(std::vector<simulator::BufferId> v) {
  std::sort(v.begin(), v.end());
  return static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

// The real planner's plan of a small manifest: 3 derive programs, 4 calls.
TEST(GraphTest, RendersThePlannersPlan) {
  std::string error;
  const std::optional<simulator::LoadPlan> planned = testing::PlannedSmallManifest({}, error);
  ASSERT_TRUE(planned.has_value()) << error;
  const simulator::LoadPlan& plan = *planned;
  ASSERT_EQ(plan.calls.size(), 4u);
  Parsed g = ParseDot(plan);
  ASSERT_NE(g, nullptr);
  std::set<simulator::BufferId> shown;
  size_t reads = 0, writes = 0;
  for (const auto& call : plan.calls) {
    shown.insert(call.reads.begin(), call.reads.end());
    shown.insert(call.writes.begin(), call.writes.end());
    reads += UniqueCount(call.reads);
    writes += UniqueCount(call.writes);
  }
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (b.residence == simulator::Residence::kStaged) shown.insert(b.id);
  }
  EXPECT_EQ(static_cast<size_t>(agnnodes(g.get())), plan.calls.size() + shown.size());
  EXPECT_EQ(CountEdges(g.get(), "read"), static_cast<int>(reads));
  EXPECT_EQ(CountEdges(g.get(), "write"), static_cast<int>(writes));
  size_t clusters = 0;
  for (Agraph_t* s = agfstsubg(g.get()); s != nullptr; s = agnxtsubg(s)) ++clusters;
  EXPECT_EQ(clusters, plan.derive_order.size());
  EXPECT_EQ(clusters, 3u);
  EXPECT_EQ(agnnodes(g.get()), 4 + 8);  // every buffer is touched by a derive call
}

}  // namespace
}  // namespace loadplan::render
