// Thin checked wrappers over Graphviz cgraph/gvc for the renderers: one process-wide
// GVC context, a mutex (Graphviz is not thread-safe), error capture, attribute setters.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::render {

// A Graphviz call that failed: "graphviz: <message>" (kInternal: our input was well formed).
inline base::Status GvError(std::string message) {
  return base::Status::Error("graphviz: " + std::move(message), base::ErrorKind::kInternal);
}

// Held around every use of Graphviz.
std::mutex& GraphvizMutex();

// The one GVC context of the process, created on first use and never freed (libgvc
// keeps global state: a second context, or freeing one twice, breaks it). Null when
// gvContext fails.
GVC_t* SharedContext();

// Collects Graphviz's error and warning messages (instead of printing them on stderr)
// while alive; restores the previous handler on destruction. Hold GraphvizMutex().
class ErrorCapture {
 public:
  ErrorCapture();
  ~ErrorCapture();
  ErrorCapture(const ErrorCapture&) = delete;
  ErrorCapture& operator=(const ErrorCapture&) = delete;
  // ": <messages>" when Graphviz said anything, else "".
  [[nodiscard]] std::string Suffix() const;

 private:
  agusererrf previous_;
};

struct GraphCloser {
  void operator()(Agraph_t* g) const { agclose(g); }
};
using GraphPtr = std::unique_ptr<Agraph_t, GraphCloser>;
GraphPtr NewDigraph(const std::string& name);

// A Graphviz object name for `name`: prefix + name with '%', '\\' and control characters
// percent-encoded ("%5C"). cgraph 2.43 quotes '"' but writes '\\' raw, so a name ending
// in a backslash would break the DOT text; NUL would truncate. The encoding is injective.
std::string GvId(std::string_view prefix, std::string_view name);

// agsafeset with a checked result; value is copied into the graph's string pool.
bool SetAttr(void* obj, const char* name, const std::string& value);
// A default for every object of `kind` (AGNODE, AGEDGE, AGRAPH) in g.
bool SetDefault(Agraph_t* g, int kind, const char* name, const std::string& value);
// label = <html>: the caller has XML-escaped every piece of text in `html`.
bool SetHtmlLabel(void* obj, const std::string& html);

// Lays g out with dot and renders it in `format` ("svg", "dot"); frees the layout. The
// document, or the first failure (a failure to free the layout is added to it).
base::Result<std::string> LayoutAndRender(Agraph_t* g, const char* format,
                                          const ErrorCapture& capture);

}  // namespace loadplan::render
