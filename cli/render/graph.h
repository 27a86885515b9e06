// The liveness graph of a load plan, built with Graphviz cgraph and laid out with gvc ("dot").
//
// Nodes: every staged source (label: name, window [b, e), lane, arena offset, size),
// every derive call (one cluster "cluster_<program>" per derive program), and every
// weight and carry a derive call reads or writes. Edges: read (buffer -> call, thin
// grey, class "read") and write (call -> carry, bold green, class "write"). Node
// colours follow the kind (render/palette.h). Node names are GvId("b:", buffer) and
// "c:<clock time>", clusters GvId("cluster_", program) (render/graphviz.h); labels are
// HTML-like labels with every name XML-escaped.
#pragma once

#include "base/status.h"
#include "simulator/plan.h"
#include "simulator/plan.h"

namespace loadplan::render {

enum class GraphFormat { kSvg, kDot };

// Lays the graph out with dot and renders it as SVG or (positioned) DOT text.
// Graphviz is not thread-safe: calls are serialised on one process-wide mutex and
// share one lazily created GVC context that is never freed (libgvc cannot host two).
// Cost: dot's layout, roughly quadratic in the number of nodes in practice.
base::Result<std::string> RenderGraph(const simulator::LoadPlan& plan, GraphFormat format);

}  // namespace loadplan::render
