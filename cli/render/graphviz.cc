// Checked Graphviz wrappers: shared context, error capture, attributes, layout + render.
#include "cli/render/graphviz.h"

#include <optional>

#include <fmt/format.h>

namespace loadplan::render {
namespace {

std::string& CapturedText() {
  static std::string text;
  return text;
}

int CaptureError(char* message) {
  if (message != nullptr) CapturedText() += message;
  return 0;
}

}  // namespace

std::mutex& GraphvizMutex() {
  static std::mutex mutex;
  return mutex;
}

GVC_t* SharedContext() {
  static GVC_t* const context = gvContext();
  return context;
}

ErrorCapture::ErrorCapture() : previous_(agseterrf(&CaptureError)) {
  CapturedText().clear();
  agreseterrors();
}

ErrorCapture::~ErrorCapture() {
  agseterrf(previous_);
  CapturedText().clear();
}

std::string ErrorCapture::Suffix() const {
  std::string text = CapturedText();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "" : ": " + text;
}

GraphPtr NewDigraph(const std::string& name) {
  std::string copy = name;
  return GraphPtr(agopen(copy.data(), Agdirected, nullptr));
}

std::string GvId(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '%' || c == '\\' || u < 0x20 || u == 0x7f) {
      out += fmt::format("%{:02X}", u);
    } else {
      out += c;
    }
  }
  return out;
}

bool SetAttr(void* obj, const char* name, const std::string& value) {
  std::string n = name, v = value, empty;
  return agsafeset(obj, n.data(), v.data(), empty.data()) == 0;
}

bool SetDefault(Agraph_t* g, int kind, const char* name, const std::string& value) {
  std::string n = name, v = value;
  return agattr(g, kind, n.data(), v.data()) != nullptr;
}

bool SetHtmlLabel(void* obj, const std::string& html) {
  Agraph_t* g = agraphof(obj);
  std::string copy = html;
  char* pooled = agstrdup_html(g, copy.data());
  if (pooled == nullptr) return false;
  std::string name = "label", def = "\\N";
  const bool ok = agsafeset(obj, name.data(), pooled, def.data()) == 0;
  agstrfree(g, pooled);
  return ok;
}

base::Result<std::string> LayoutAndRender(Agraph_t* g, const char* format,
                                          const ErrorCapture& capture) {
  GVC_t* gvc = SharedContext();
  if (gvc == nullptr) return GvError("cannot create a context" + capture.Suffix());
  if (gvLayout(gvc, g, "dot") != 0) return GvError("dot layout failed" + capture.Suffix());
  char* data = nullptr;
  unsigned int length = 0;
  const int rc = gvRenderData(gvc, g, format, &data, &length);
  std::optional<std::string> text;
  if (rc == 0 && data != nullptr) text = std::string(data, length);
  if (data != nullptr) gvFreeRenderData(data);
  const bool freed = gvFreeLayout(gvc, g) == 0;
  if (!text) {
    // The cleanup's own failure joins the render's (never dropped).
    return GvError(fmt::format("rendering {} failed{}{}", format, capture.Suffix(),
                               freed ? "" : "; cannot free the layout"));
  }
  if (!freed) return GvError("cannot free the layout");
  return *std::move(text);
}

}  // namespace loadplan::render

// Graphviz 2.43 leaks in its HTML-label parser (htmlparse) and through the pango/fontconfig
// text-layout plugin, and the shared context is deliberately never freed. Under
// LeakSanitizer, report leaks only from code outside those libraries. The sanitizer
// runtime declares this hook weak; unsanitized builds never call it. (A graph we forget
// to agclose is still reported: cgraph is not suppressed.)
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgvc.so\nleak:libgvplugin_\nleak:libfontconfig.so\n"
         "leak:libpango\nleak:libcairo.so\nleak:libglib-2.0.so\n";
}
