// Canonical manifest writer: keys sorted bytewise at every level, 2-space indentation, a
// shallow container (at most two levels) on one line when the line stays within 100 columns
// (docs/manifest.md, "Canonical form"). The text is laid out straight from the model.
#include "verifier/writer.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace loadplan::verifier {
namespace {

constexpr size_t kLineWidth = 100;  // one-line containers stay within this many columns

// A value as the canonical form lays it out: a scalar's JSON text, or a container's members
// (each with its key prefix: "\"kind\": " in objects, "" in arrays), its depth in container
// levels (capped at 3) and, when it is at most two levels deep and its one-line text is at
// most kLineWidth long, that text. Built straight from the model: no JSON value in between.
struct Node {
  std::string text;  // scalar: its JSON; container: the one-line text when `fits`
  bool container = false, object = false, fits = false;
  int depth = 0;
  std::vector<std::pair<std::string, Node>> members;
};

// JSON text of a string: UTF-8 kept, invalid bytes replaced (U+FFFD), escapes where JSON
// requires them. Plain printable ASCII, by far the common case, is copied as is.
std::string JsonString(std::string_view s) {
  const bool plain = std::all_of(
      s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
  if (plain) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    out.append(s);
    out += '"';
    return out;
  }
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Node Scalar(std::string text) { return {.text = std::move(text)}; }
Node Str(std::string_view s) { return Scalar(JsonString(s)); }
Node Int(int64_t v) { return Scalar(std::to_string(v)); }
Node True() { return Scalar("true"); }

Node Container(bool object, std::vector<std::pair<std::string, Node>> members) {
  Node n{.container = true, .object = object, .depth = 1, .members = std::move(members)};
  bool fits = true;
  for (const auto& [key, child] : n.members) {
    n.depth = std::max(n.depth, std::min(3, child.depth + 1));
    fits = fits && (!child.container || child.fits);
  }
  if (!fits || n.depth > 2) return n;
  std::string line = object ? "{" : "[";
  for (size_t i = 0; i < n.members.size() && line.size() <= kLineWidth; ++i) {
    if (i > 0) line += ", ";
    line += n.members[i].first;
    line += n.members[i].second.text;
  }
  line += object ? "}" : "]";
  if (line.size() <= kLineWidth) {
    n.text = std::move(line);
    n.fits = true;
  }
  return n;
}

// An object from (key, value) pairs; keys are written in the order given (callers give them
// sorted bytewise, as a JSON object with std::map keys would print).
using Members = std::vector<std::pair<std::string_view, Node>>;
Node Object(Members members) {
  std::vector<std::pair<std::string, Node>> m;
  m.reserve(members.size());
  for (auto& [k, v] : members) {
    std::string key = JsonString(k);
    key += ": ";
    m.emplace_back(std::move(key), std::move(v));
  }
  return Container(true, std::move(m));
}
Node Array(std::vector<Node> items) {
  std::vector<std::pair<std::string, Node>> m;
  m.reserve(items.size());
  for (Node& v : items) m.emplace_back(std::string(), std::move(v));
  return Container(false, std::move(m));
}

// A map section: one member per item, keyed by name, sorted bytewise; of items with the same
// name the last one wins (as assigning into a JSON object would).
template <class T, class Name, class Value>
Node Section(const std::vector<T>& items, Name name, Value value) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto less = [&](size_t a, size_t b) { return name(items[a]) < name(items[b]); };
  if (!std::is_sorted(order.begin(), order.end(), less))
    std::stable_sort(order.begin(), order.end(), less);
  std::vector<std::pair<std::string, Node>> m;
  m.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && name(items[order[i]]) == name(items[order[i + 1]])) continue;
    std::string key = JsonString(name(items[order[i]]));
    key += ": ";
    m.emplace_back(std::move(key), value(items[order[i]]));
  }
  return Container(true, std::move(m));
}

Node ExprNode(const Expr& e) { return e.IsConst() ? Int(e.value) : Str(ToString(e)); }

Node Dims(const std::vector<Expr>& dims) {
  std::vector<Node> items;
  items.reserve(dims.size());
  for (const Expr& d : dims) items.push_back(ExprNode(d));
  return Array(std::move(items));
}

// An array of items (each its JSON text) on one line: "[a, b]".
std::string OneLine(const std::vector<std::string>& items) {
  std::string line = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) line += ", ";
    line += items[i];
  }
  line += "]";
  return line;
}

// The same array one item per line, as Print lays out a member of an object at `indent`.
void AppendOnePerLine(const std::vector<std::string>& items, size_t indent, std::string& out) {
  out += "[\n";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",\n";
    out.append(indent + 4, ' ');
    out += items[i];
  }
  out += "\n";
  out.append(indent + 2, ' ');
  out += "]";
}

// One member of a buffer's object: its key prefix, its one-line text and, for an array, its
// items (laid out one per line when the one-line text does not fit).
struct BufferMember {
  std::string_view key;
  std::string text;
  const std::vector<std::string>* items = nullptr;
};

// A buffer's text where Print would put it (starting at `column` of a line indented by
// `indent`), made directly: what Print would write for the buffer's object (keys dtype,
// encoding, export, kind, lane, shape, slice, tensor, tensors), byte for byte, without the tree
// (the golden outputs and canonical files check it). A buffer is at most two levels deep (its
// shape, its tensors), so it goes on one line when that line fits, else one member per line
// with each array on one line when it fits there.
std::string BufferText(const Buffer& b, size_t indent, size_t column) {
  std::vector<std::string> dims, tensors;
  for (const Expr& d : b.shape) dims.push_back(ExprNode(d).text);
  if (b.tensors) {
    for (const std::string& t : *b.tensors) tensors.push_back(JsonString(t));
  }
  BufferMember m[9];
  size_t n = 0;
  m[n++] = {"\"dtype\": ", JsonString(base::DtypeName(b.dtype))};
  if (b.encoding) m[n++] = {"\"encoding\": ", JsonString(*b.encoding)};
  if (b.exported) m[n++] = {"\"export\": ", "true"};
  m[n++] = {"\"kind\": ", JsonString(BufferKindName(b.kind))};
  if (b.lane) m[n++] = {"\"lane\": ", std::to_string(*b.lane)};
  m[n++] = {"\"shape\": ", OneLine(dims), &dims};
  if (b.slice) {
    const std::string extent =
        b.slice->extent ? fmt::format("\"extent\": {}, ", *b.slice->extent) : "";
    m[n++] = {"\"slice\": ", fmt::format("{{\"dim\": {}, {}\"length\": {}, \"start\": {}}}",
                                         b.slice->dim, extent, b.slice->length, b.slice->start)};
  }
  if (b.tensor) m[n++] = {"\"tensor\": ", JsonString(*b.tensor)};
  if (b.tensors) m[n++] = {"\"tensors\": ", OneLine(tensors), &tensors};
  std::string line = "{";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) line += ", ";
    line += m[i].key;
    line += m[i].text;
  }
  line += "}";
  if (column + line.size() <= kLineWidth) return line;
  const std::string pad(indent + 2, ' ');
  std::string out = "{\n";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ",\n";
    out += pad;
    out += m[i].key;
    if (m[i].items == nullptr || pad.size() + m[i].key.size() + m[i].text.size() <= kLineWidth) {
      out += m[i].text;
    } else {
      AppendOnePerLine(*m[i].items, indent, out);
    }
  }
  out += "\n";
  out.append(indent, ' ');
  out += "}";
  return out;
}

// The buffers section at top level (indent 2, so each buffer at indent 4), each buffer's text
// made directly (BufferText). Its nodes keep a buffer's depth (2), so the section is never put
// on one line, as with the full tree.
Node BuffersSection(const std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto less = [&](size_t a, size_t b) { return buffers[a].name < buffers[b].name; };
  if (!std::is_sorted(order.begin(), order.end(), less))
    std::stable_sort(order.begin(), order.end(), less);
  std::vector<std::pair<std::string, Node>> m;
  m.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Buffer& b = buffers[order[i]];
    if (i + 1 < order.size() && b.name == buffers[order[i + 1]].name) continue;  // last wins
    std::string key = JsonString(b.name);
    key += ": ";
    const size_t column = 4 + key.size();
    m.emplace_back(std::move(key), Node{.text = BufferText(b, 4, column), .depth = 2});
  }
  return Container(true, std::move(m));
}

Node ParamNode(const Param& p) {
  if (p.access == Access::kScalar) return Str("scalar");
  Members m;
  m.emplace_back("access", Str(AccessName(p.access)));
  if (p.dtype) m.emplace_back("dtype", Str(base::DtypeName(*p.dtype)));
  if (p.extent) m.emplace_back("extent", ExprNode(*p.extent));
  return Object(std::move(m));
}

Node ArgNode(const Arg& a) {
  if (a.buffer) return Str(*a.buffer);
  if (a.scalar) return ExprNode(*a.scalar);
  return Scalar("null");  // only a malformed Arg has neither
}

Node CallNode(const Call& c) {
  if (c.type == CallType::kCollective)
    return Object({{"buffer", Str(c.buffer)}, {"collective", Str(c.collective)}});
  Members m;
  m.reserve(4);
  if (!c.args.empty())
    m.emplace_back(
        "args", Section(
                    c.args, [](const Arg& a) -> const std::string& { return a.param; }, ArgNode));
  if (!c.block.empty()) m.emplace_back("block", Dims(c.block));
  if (!c.grid.empty()) m.emplace_back("grid", Dims(c.grid));
  m.emplace_back("kernel", Str(c.kernel));
  return Object(std::move(m));
}

Node ProgramNode(const Program& p) {
  std::vector<Node> calls;
  calls.reserve(p.calls.size());
  for (const Call& c : p.calls) calls.push_back(CallNode(c));
  Members m;
  if (p.batch) m.emplace_back("batch", Str(*p.batch));
  m.emplace_back("calls", Array(std::move(calls)));
  if (p.derive) m.emplace_back("derive", True());
  if (p.graph) m.emplace_back("graph", True());
  if (p.once) m.emplace_back("once", True());
  return Object(std::move(m));
}

template <class T>
const std::string& NameOf(const T& item) {
  return item.name;
}

Node ManifestNode(const Manifest& m) {
  Members o;
  if (!m.buffers.empty()) o.emplace_back("buffers", BuffersSection(m.buffers));
  if (!m.kernels.empty()) {
    o.emplace_back("kernels", Section(m.kernels, NameOf<Kernel>, [](const Kernel& k) {
                     return Object({{"params", Section(k.params, NameOf<Param>, ParamNode)}});
                   }));
  }
  if (m.load.lanes != 1 || m.load.prefetch != 0) {
    Members load;
    if (m.load.lanes != 1) load.emplace_back("lanes", Int(m.load.lanes));
    if (m.load.prefetch != 0) load.emplace_back("prefetch", Int(m.load.prefetch));
    o.emplace_back("load", Object(std::move(load)));
  }
  o.emplace_back("name", Str(m.name));
  if (!m.programs.empty())
    o.emplace_back("programs", Section(m.programs, NameOf<Program>, ProgramNode));
  const bool sliced = std::any_of(m.buffers.begin(), m.buffers.end(),
                                  [](const Buffer& b) { return b.slice.has_value(); });
  o.emplace_back("schema", Int(sliced ? std::max(m.schema, 2) : m.schema));
  if (!m.vars.empty()) {
    o.emplace_back("vars", Section(m.vars, NameOf<Variable>, [](const Variable& v) {
                     return Object({{"max", Int(v.max)}, {"min", Int(v.min)}});
                   }));
  }
  return Object(std::move(o));
}

// `column` is where n starts on its line. A container at most two levels deep goes on one
// line when the line stays within kLineWidth; anything else puts one member per line.
void Print(const Node& n, size_t indent, size_t column, std::string& out) {
  if (!n.container || (n.fits && column + n.text.size() <= kLineWidth)) {
    out += n.text;
    return;
  }
  const std::string pad(indent + 2, ' ');
  out += n.object ? "{\n" : "[\n";
  for (size_t i = 0; i < n.members.size(); ++i) {
    if (i > 0) out += ",\n";
    out += pad;
    out += n.members[i].first;
    Print(n.members[i].second, indent + 2, pad.size() + n.members[i].first.size(), out);
  }
  out += "\n";
  out.append(indent, ' ');
  out += n.object ? "}" : "]";
}

}  // namespace

std::string WriteManifest(const Manifest& m) {
  std::string out;
  out.reserve(256 * (m.buffers.size() + m.programs.size()) + 4096);  // ~ a buffer's text
  Print(ManifestNode(m), 0, 0, out);
  out += "\n";
  return out;
}

}  // namespace loadplan::verifier
