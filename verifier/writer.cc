// Canonical manifest writer. The model becomes a JSON value (nlohmann's default
// object is a std::map, so keys come out sorted bytewise), printed with 2-space
// indentation; a shallow container (at most two levels) prints on one line when
// the line stays within 100 columns.
#include "verifier/writer.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace loadplan::verifier {
namespace {

using nlohmann::json;

constexpr size_t kLineWidth = 100;  // one-line containers stay within this many columns

json ExprValue(const Expr& e) {
  if (e.IsConst()) return e.value;
  return ToString(e);
}

json Dims(const std::vector<Expr>& dims) {
  json arr = json::array();
  for (const Expr& d : dims) arr.push_back(ExprValue(d));
  return arr;
}

json BufferValue(const Buffer& b) {
  json o = {{"kind", BufferKindName(b.kind)},
            {"dtype", base::DtypeName(b.dtype)},
            {"shape", Dims(b.shape)}};
  if (b.tensor) o["tensor"] = *b.tensor;
  if (b.exported) o["export"] = true;
  if (b.lane) o["lane"] = *b.lane;
  if (b.encoding) o["encoding"] = *b.encoding;
  return o;
}

json ParamValue(const Param& p) {
  if (p.access == Access::kScalar) return "scalar";
  json o = {{"access", AccessName(p.access)}};
  if (p.dtype) o["dtype"] = base::DtypeName(*p.dtype);
  if (p.extent) o["extent"] = ExprValue(*p.extent);
  return o;
}

json CallValue(const Call& c) {
  if (c.type == CallType::kCollective) return {{"collective", c.collective}, {"buffer", c.buffer}};
  json o = {{"kernel", c.kernel}};
  if (!c.args.empty()) {
    json args = json::object();
    for (const Arg& a : c.args) {
      if (a.buffer) {
        args[a.param] = *a.buffer;
      } else if (a.scalar) {
        args[a.param] = ExprValue(*a.scalar);
      } else {
        args[a.param] = nullptr;  // only a malformed Arg has neither
      }
    }
    o["args"] = std::move(args);
  }
  if (!c.grid.empty()) o["grid"] = Dims(c.grid);
  if (!c.block.empty()) o["block"] = Dims(c.block);
  return o;
}

json ProgramValue(const Program& p) {
  json calls = json::array();
  for (const Call& c : p.calls) calls.push_back(CallValue(c));
  json o = {{"calls", std::move(calls)}};
  if (p.derive) o["derive"] = true;
  if (p.once) o["once"] = true;
  if (p.graph) o["graph"] = true;
  if (p.batch) o["batch"] = *p.batch;
  return o;
}

json ManifestValue(const Manifest& m) {
  json o = {{"schema", m.schema}, {"name", m.name}};
  if (m.load.lanes != 1 || m.load.prefetch != 0) {
    json load = json::object();
    if (m.load.lanes != 1) load["lanes"] = m.load.lanes;
    if (m.load.prefetch != 0) load["prefetch"] = m.load.prefetch;
    o["load"] = std::move(load);
  }
  auto section = [&](const char* key, const auto& items, auto value) {
    if (items.empty()) return;
    json s = json::object();
    for (const auto& item : items) s[item.name] = value(item);
    o[key] = std::move(s);
  };
  section("vars", m.vars, [](const Variable& v) { return json{{"min", v.min}, {"max", v.max}}; });
  section("buffers", m.buffers, BufferValue);
  section("kernels", m.kernels, [](const Kernel& k) {
    json params = json::object();
    for (const Param& p : k.params) params[p.name] = ParamValue(p);
    return json{{"params", std::move(params)}};
  });
  section("programs", m.programs, ProgramValue);
  return o;
}

std::string Scalar(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

// Levels of containers in v: 0 for a scalar, 1 for [1, 2], 2 for {"a": [1]}.
int Depth(const json& v) {
  int inner = 0;
  if (v.is_structured()) {
    for (const json& item : v) inner = std::max(inner, Depth(item));
  }
  return v.is_structured() ? inner + 1 : 0;
}

std::string InlineText(const json& v) {
  if (!v.is_structured()) return Scalar(v);
  std::string out = v.is_object() ? "{" : "[";
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it != v.begin()) out += ", ";
    if (v.is_object()) out += Scalar(json(it.key())) + ": ";
    out += InlineText(*it);
  }
  return out + (v.is_object() ? "}" : "]");
}

// `column` is where v starts on its line. A value at most two container
// levels deep goes on one line when the line stays within kLineWidth.
void Print(const json& v, size_t indent, size_t column, std::string& out) {
  if (Depth(v) <= 2) {
    std::string line = InlineText(v);
    if (Depth(v) == 0 || column + line.size() <= kLineWidth) {
      out += line;
      return;
    }
  }
  std::string pad(indent + 2, ' ');
  out += v.is_object() ? "{\n" : "[\n";
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it != v.begin()) out += ",\n";
    out += pad;
    std::string key = v.is_object() ? Scalar(json(it.key())) + ": " : "";
    out += key;
    Print(*it, indent + 2, pad.size() + key.size(), out);
  }
  out += "\n" + std::string(indent, ' ') + (v.is_object() ? "}" : "]");
}

}  // namespace

std::string WriteManifest(const Manifest& m) {
  std::string out;
  Print(ManifestValue(m), 0, 0, out);
  out += "\n";
  return out;
}

}  // namespace loadplan::verifier
