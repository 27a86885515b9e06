// The liveness graph: cgraph nodes/edges/clusters for a plan, laid out and rendered by gvc.
#include "cli/render/graph.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "base/bytes.h"
#include "cli/render/graphviz.h"
#include "cli/render/memory_series.h"
#include "cli/render/palette.h"
#include "cli/render/xml_escape.h"

namespace loadplan::render {
namespace {

using simulator::Index;
using simulator::LoadPlan;
using simulator::PlannedBuffer;
using simulator::Residence;

std::string BufferLabel(const PlannedBuffer& b) {
  std::string label =
      fmt::format("<B>{}</B><BR/>{}", XmlEscape(b.name), verifier::BufferKindName(b.kind));
  if (b.residence == Residence::kStaged) {
    label += fmt::format("<BR/>window [{}, {})", b.window_begin, b.window_end);
    if (b.lane) label += fmt::format("  lane {}", *b.lane);
    label += fmt::format("<BR/>offset {}", base::FormatBytesAuto(b.offset));
  }
  return label + fmt::format("<BR/>{}", XmlEscape(base::FormatBytesAuto(b.bytes)));
}

// Buffers that get a node: every staged buffer and everything a derive call touches.
std::vector<bool> BuffersShown(const LoadPlan& plan) {
  std::vector<bool> shown(plan.buffers.size(), false);
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) {
    shown[i] = plan.buffers[i].residence == Residence::kStaged;
  }
  for (const auto& call : plan.calls) {
    for (const simulator::BufferId i : call.reads)
      if (Index(i) < shown.size()) shown[Index(i)] = true;
    for (const simulator::BufferId i : call.writes)
      if (Index(i) < shown.size()) shown[Index(i)] = true;
  }
  return shown;
}

bool StyleBufferNode(Agnode_t* n, const PlannedBuffer& b) {
  const bool staged = b.residence == Residence::kStaged;
  return SetAttr(n, "shape", "box") && SetAttr(n, "style", staged ? "rounded,filled" : "filled") &&
         SetAttr(n, "fillcolor", std::string(KindColour(b.kind))) &&
         SetAttr(n, "class", std::string(verifier::BufferKindName(b.kind))) &&
         SetHtmlLabel(n, BufferLabel(b));
}

// Adds one node per shown buffer; nodes[i] stays null for buffers not shown.
base::Status AddBufferNodes(Agraph_t* g, const LoadPlan& plan, std::vector<Agnode_t*>& nodes) {
  const std::vector<bool> shown = BuffersShown(plan);
  nodes.assign(plan.buffers.size(), nullptr);
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) {
    if (!shown[i]) continue;
    const PlannedBuffer& b = plan.buffers[i];
    std::string name = GvId("b:", b.name);
    nodes[i] = agnode(g, name.data(), 1);
    if (nodes[i] == nullptr)
      return GvError(fmt::format("cannot create the node of buffer {}", b.name));
    if (!StyleBufferNode(nodes[i], b))
      return GvError(fmt::format("cannot style buffer {}", b.name));
  }
  return {};
}

// The cluster subgraph of a derive program, created on first use.
Agraph_t* ProgramCluster(Agraph_t* g, const std::string& program) {
  std::string name = GvId("cluster_", program);
  if (Agraph_t* existing = agsubg(g, name.data(), 0)) return existing;
  Agraph_t* sub = agsubg(g, name.data(), 1);
  if (sub == nullptr) return nullptr;
  const bool ok = SetHtmlLabel(sub, "<I>" + XmlEscape(program) + "</I>") &&
                  SetAttr(sub, "style", "rounded") && SetAttr(sub, "color", "#888888") &&
                  SetAttr(sub, "class", "program");
  return ok ? sub : nullptr;
}

base::Status AddCallNodes(Agraph_t* g, const LoadPlan& plan, std::vector<Agnode_t*>& nodes) {
  nodes.clear();
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    const auto& call = plan.calls[t];
    Agraph_t* cluster = ProgramCluster(g, call.program);
    if (cluster == nullptr)
      return GvError(fmt::format("cannot create the cluster of {}", call.program));
    std::string name = fmt::format("c:{}", t);
    Agnode_t* n = agnode(cluster, name.data(), 1);
    if (n == nullptr) return GvError(fmt::format("cannot create the node of call {}", t));
    const std::string label = fmt::format("t = {}<BR/>{}", t, XmlEscape(CallLabel(call)));
    if (!SetAttr(n, "shape", "ellipse") || !SetAttr(n, "style", "filled") ||
        !SetAttr(n, "fillcolor", "#ffffff") || !SetAttr(n, "class", "call") ||
        !SetHtmlLabel(n, label)) {
      return GvError(fmt::format("cannot style call {}", t));
    }
    nodes.push_back(n);
  }
  return {};
}

base::Status AddEdge(Agraph_t* g, Agnode_t* tail, Agnode_t* head, bool write) {
  Agedge_t* e = agedge(g, tail, head, nullptr, 1);
  if (e == nullptr) return GvError("cannot create an edge");
  const bool ok = write ? SetAttr(e, "class", "write") && SetAttr(e, "style", "bold") &&
                              SetAttr(e, "color", "#31a354")
                        : SetAttr(e, "class", "read") && SetAttr(e, "style", "solid") &&
                              SetAttr(e, "color", "#636363");
  return ok ? base::Status::Ok() : GvError("cannot style an edge");
}

std::vector<uint32_t> Unique(const std::vector<simulator::BufferId>& ids) {
  std::vector<uint32_t> v;
  for (const simulator::BufferId i : ids) v.push_back(Index(i));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

base::Status AddEdges(Agraph_t* g, const LoadPlan& plan, const std::vector<Agnode_t*>& buffers,
                      const std::vector<Agnode_t*>& calls) {
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    for (const uint32_t i : Unique(plan.calls[t].reads)) {
      if (i >= buffers.size())
        return GvError(fmt::format("call {} reads buffer index {}: out of range", t, i));
      if (auto st = AddEdge(g, buffers[i], calls[t], false); !st.ok()) return st;
    }
    for (const uint32_t i : Unique(plan.calls[t].writes)) {
      if (i >= buffers.size())
        return GvError(fmt::format("call {} writes buffer index {}: out of range", t, i));
      if (auto st = AddEdge(g, calls[t], buffers[i], true); !st.ok()) return st;
    }
  }
  return {};
}

bool StyleGraph(Agraph_t* g, const LoadPlan& plan) {
  const std::string label =
      fmt::format("<B>{}</B>: {} derive calls, {} lanes, prefetch {}<BR/>arena {} (lower bound {})",
                  XmlEscape(plan.manifest_name), plan.calls.size(), plan.lanes, plan.prefetch,
                  base::FormatBytesAuto(plan.arena_bytes), base::FormatBytesAuto(plan.lower_bound));
  return SetAttr(g, "rankdir", "LR") && SetAttr(g, "fontname", "Helvetica") &&
         SetAttr(g, "labelloc", "t") && SetHtmlLabel(g, label) &&
         SetDefault(g, AGNODE, "fontname", "Helvetica") && SetDefault(g, AGNODE, "fontsize", "10");
}

base::Status BuildGraph(Agraph_t* g, const LoadPlan& plan) {
  if (!StyleGraph(g, plan)) return GvError("cannot set the graph's attributes");
  std::vector<Agnode_t*> buffers, calls;
  if (auto st = AddBufferNodes(g, plan, buffers); !st.ok()) return st;
  if (auto st = AddCallNodes(g, plan, calls); !st.ok()) return st;
  return AddEdges(g, plan, buffers, calls);
}

}  // namespace

base::Result<std::string> RenderGraph(const LoadPlan& plan, GraphFormat format) {
  std::lock_guard lock(GraphvizMutex());
  ErrorCapture capture;
  GraphPtr g = NewDigraph("loadplan");
  if (!g) return GvError("cannot create a graph" + capture.Suffix());
  if (base::Status st = BuildGraph(g.get(), plan); !st.ok()) {
    return base::Status::Error(st.message() + capture.Suffix(), st.kind());
  }
  return LayoutAndRender(g.get(), format == GraphFormat::kSvg ? "svg" : "dot", capture);
}

}  // namespace loadplan::render
