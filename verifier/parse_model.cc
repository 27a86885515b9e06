// ParseManifest: the JSON tree -> the typed model, every problem a diagnostic
// at its pointer; entities with a problem stay in the model marked `malformed`.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "verifier/sort_by_name.h"
#include "verifier/codes.h"
#include "verifier/parse.h"
#include "verifier/parse_fields.h"
#include "verifier/parse_json.h"

namespace loadplan::verifier {
namespace {

using json::Kind;
using json::Node;
using parse::Fields;
using parse::Ptr;

std::string Article(std::string_view noun) {
  bool vowel =
      !noun.empty() && std::string_view("aeiou").find(noun.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", noun);
}

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Calls `f(value, pointer)` when `key` is present in `obj`.
template <typename F>
void With(const Node& obj, const Ptr& ptr, std::string_view key, F&& f) {
  if (const Node* n = obj.Find(key)) f(*n, Ptr(ptr, key));
}

Variable BuildVar(Fields& in, const std::string& name, const Node& n, const Ptr& ptr) {
  Variable v;
  v.name = name;
  in.Name(name, ptr, "variable", true);
  if (!in.Object(n, ptr, "variable")) return v;
  in.CheckKeys(n, ptr, {"max", "min"}, {"max", "min"});
  With(n, ptr, "min", [&](const Node& x, const Ptr& p) { v.min = in.Int(x, p).value_or(0); });
  With(n, ptr, "max", [&](const Node& x, const Ptr& p) { v.max = in.Int(x, p).value_or(0); });
  return v;
}

LoadOptions BuildLoad(Fields& in, const Node& n, const Ptr& ptr) {
  LoadOptions load;
  if (!in.Object(n, ptr, "load section")) {
    load.lanes_malformed =
        true;  // "load": 5 gives lanes no value either: no K7 against the default
    return load;
  }
  in.CheckKeys(n, ptr, {"lanes", "prefetch"}, {});
  With(n, ptr, "lanes", [&](const Node& x, const Ptr& p) {
    if (auto v = in.Int(x, p, 1, kU32Max)) {
      load.lanes = static_cast<uint32_t>(*v);
    } else {
      load.lanes_malformed = true;
    }
  });
  With(n, ptr, "prefetch", [&](const Node& x, const Ptr& p) {
    if (auto v = in.Int(x, p, 0, kU32Max)) load.prefetch = static_cast<uint32_t>(*v);
  });
  return load;
}

// {"dim": D, "start": S, "length": N[, "extent": E]}: integers, D and S >= 0, N and E >= 1;
// absent when malformed.
std::optional<TensorSlice> BuildSlice(Fields& in, const Node& n, const Ptr& ptr) {
  if (!in.Object(n, ptr, "slice")) return std::nullopt;
  in.CheckKeys(n, ptr, {"dim", "extent", "length", "start"}, {"dim", "length", "start"});
  std::optional<int64_t> dim, start, length, extent;
  bool bad_extent = false;
  With(n, ptr, "dim", [&](const Node& x, const Ptr& p) { dim = in.Int(x, p, 0, kU32Max); });
  With(n, ptr, "start", [&](const Node& x, const Ptr& p) { start = in.Int(x, p, 0, kI64Max); });
  With(n, ptr, "length", [&](const Node& x, const Ptr& p) { length = in.Int(x, p, 1, kI64Max); });
  With(n, ptr, "extent", [&](const Node& x, const Ptr& p) {
    extent = in.Int(x, p, 1, kI64Max);
    bad_extent = !extent;
  });
  if (!dim || !start || !length || bad_extent) return std::nullopt;
  TensorSlice s{.dim = static_cast<uint64_t>(*dim),
                .start = static_cast<uint64_t>(*start),
                .length = static_cast<uint64_t>(*length)};
  if (extent) s.extent = static_cast<uint64_t>(*extent);
  return s;
}

Buffer BuildBuffer(Fields& in, const std::string& name, const Node& n, const Ptr& ptr) {
  Buffer b;
  b.name = name;
  in.Name(name, ptr, "buffer", false);
  if (!in.Object(n, ptr, "buffer")) return b;
  in.CheckKeys(
      n, ptr,
      {"dtype", "encoding", "export", "kind", "lane", "shape", "slice", "tensor", "tensors"},
      {"dtype", "kind", "shape"});
  With(n, ptr, "kind", [&](const Node& x, const Ptr& p) {
    auto s =
        in.Enum(x, p, {"weight", "source", "carry", "state", "scratch", "input", "output", "peer"});
    if (s) b.kind = *ParseBufferKind(*s);
  });
  With(n, ptr, "dtype", [&](const Node& x, const Ptr& p) {
    b.dtype = in.DtypeValue(x, p).value_or(base::Dtype::kU8);
  });
  With(n, ptr, "shape", [&](const Node& x, const Ptr& p) {
    b.shape = in.Dims(x, p, 0, std::numeric_limits<size_t>::max()).value_or(std::vector<Expr>{});
  });
  With(n, ptr, "tensor", [&](const Node& x, const Ptr& p) { b.tensor = in.String(x, p); });
  With(n, ptr, "tensors",
       [&](const Node& x, const Ptr& p) { b.tensors = in.NonEmptyStrings(x, p); });
  With(n, ptr, "slice", [&](const Node& x, const Ptr& p) { b.slice = BuildSlice(in, x, p); });
  With(n, ptr, "export",
       [&](const Node& x, const Ptr& p) { b.exported = in.Bool(x, p).value_or(false); });
  With(n, ptr, "lane", [&](const Node& x, const Ptr& p) {
    if (auto v = in.Int(x, p, 0, kU32Max)) b.lane = static_cast<uint32_t>(*v);
  });
  With(n, ptr, "encoding", [&](const Node& x, const Ptr& p) {
    b.encoding = in.Enum(x, p, {"fp4_e2m1x2", "e8m0"});
  });
  return b;
}

Param BuildParam(Fields& in, const std::string& name, const Node& n, const Ptr& ptr) {
  Param p;
  p.name = name;
  in.Name(name, ptr, "parameter", true);
  if (n.kind == Kind::kString) {
    if (in.Enum(n, ptr, {"scalar"})) p.access = Access::kScalar;
    return p;
  }
  if (n.kind != Kind::kObject) {
    in.sink().Error(
        std::string(codes::kType), ptr,
        fmt::format("a parameter is \"scalar\" or an object {{access, dtype, extent}}, got {}",
                    Article(json::KindName(n.kind))));
    return p;
  }
  in.CheckKeys(n, ptr, {"access", "dtype", "extent"}, {"access", "dtype"});
  With(n, ptr, "access", [&](const Node& x, const Ptr& q) {
    if (auto s = in.Enum(x, q, {"read", "write", "readwrite"})) p.access = *ParseAccess(*s);
  });
  With(n, ptr, "dtype", [&](const Node& x, const Ptr& q) { p.dtype = in.DtypeValue(x, q); });
  With(n, ptr, "extent", [&](const Node& x, const Ptr& q) { p.extent = in.IntOrExpr(x, q, 0); });
  return p;
}

Kernel BuildKernel(Fields& in, const std::string& name, const Node& n, const Ptr& ptr) {
  Kernel k;
  k.name = name;
  in.Name(name, ptr, "kernel", false);
  if (!in.Object(n, ptr, "kernel")) return k;
  in.CheckKeys(n, ptr, {"params"}, {"params"});
  With(n, ptr, "params", [&](const Node& x, const Ptr& p) {
    if (!in.Object(x, p, "parameter map")) return;
    k.params.reserve(x.members.size());
    for (const auto& [pname, pnode] : x.members)
      k.params.push_back(BuildParam(in, pname, pnode, Ptr(p, pname)));
  });
  return k;
}

// The brief's resolution: an integer is a scalar; a string is a buffer for a
// declared buffer param, an expression for a declared scalar param, and
// otherwise a buffer when it names a declared buffer, else an expression.
Arg BuildArg(Fields& in, const Manifest& m, const Kernel* kernel, const std::string& param,
             const Node& n, const Ptr& ptr) {
  Arg a;
  a.param = param;
  if (n.kind == Kind::kInt || n.kind == Kind::kNumber) {
    if (auto v = in.Int(n, ptr)) a.scalar = Expr::Const(*v);
    return a;
  }
  if (n.kind != Kind::kString) {
    in.sink().Error(
        std::string(codes::kType), ptr,
        fmt::format("an argument is an integer or a string (buffer name or expression), got {}",
                    Article(json::KindName(n.kind))));
    return a;
  }
  const Param* p = kernel != nullptr ? FindParam(*kernel, param) : nullptr;
  if (p != nullptr && p->malformed) p = nullptr;
  bool is_buffer = p != nullptr ? p->access != Access::kScalar : m.FindBuffer(n.text) != nullptr;
  if (is_buffer) {
    a.buffer = n.text;
  } else {
    a.scalar = in.ExprText(n.text, ptr);
  }
  return a;
}

void BuildKernelCall(Fields& in, const Manifest& m, Call& c, const Node& n, const Ptr& ptr) {
  With(n, ptr, "kernel",
       [&](const Node& x, const Ptr& p) { c.kernel = in.String(x, p).value_or(""); });
  const Kernel* kernel = m.FindKernel(c.kernel);
  With(n, ptr, "args", [&](const Node& x, const Ptr& p) {
    if (!in.Object(x, p, "argument map")) return;
    c.args.reserve(x.members.size());
    for (const auto& [param, value] : x.members) {
      c.args.push_back(BuildArg(in, m, kernel, param, value, Ptr(p, param)));
    }
  });
  With(n, ptr, "grid", [&](const Node& x, const Ptr& p) {
    c.grid = in.Dims(x, p, 1, 3).value_or(std::vector<Expr>{});
  });
  With(n, ptr, "block", [&](const Node& x, const Ptr& p) {
    c.block = in.Dims(x, p, 1, 3).value_or(std::vector<Expr>{});
  });
}

Call BuildCall(Fields& in, const Manifest& m, const Node& n, const Ptr& ptr) {
  Call c;
  if (!in.Object(n, ptr, "call")) return c;
  bool kernel = n.Find("kernel") != nullptr, collective = n.Find("collective") != nullptr;
  if (kernel == collective) {
    in.sink().Error(std::string(codes::kType), ptr,
                    kernel ? "a call has either \"kernel\" or \"collective\", not both"
                           : "a call needs \"kernel\" (a kernel call) or \"collective\"");
  }
  if (collective && !kernel) {
    c.type = CallType::kCollective;
    in.CheckKeys(n, ptr, {"buffer", "collective"}, {"buffer"});
    With(n, ptr, "collective", [&](const Node& x, const Ptr& p) {
      c.collective =
          in.Enum(x, p, {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}).value_or("");
    });
    With(n, ptr, "buffer",
         [&](const Node& x, const Ptr& p) { c.buffer = in.String(x, p).value_or(""); });
    return c;
  }
  if (kernel && !collective) {
    in.CheckKeys(n, ptr, {"args", "block", "grid", "kernel"}, {});
  } else {
    in.CheckKeys(n, ptr, {"args", "block", "buffer", "collective", "grid", "kernel"}, {});
  }
  BuildKernelCall(in, m, c, n, ptr);
  return c;
}

Program BuildProgram(Fields& in, const Manifest& m, const std::string& name, const Node& n,
                     const Ptr& ptr) {
  Program g;
  g.name = name;
  in.Name(name, ptr, "program", false);
  if (!in.Object(n, ptr, "program")) return g;
  in.CheckKeys(n, ptr, {"batch", "calls", "derive", "graph", "once"}, {"calls"});
  With(n, ptr, "derive",
       [&](const Node& x, const Ptr& p) { g.derive = in.Bool(x, p).value_or(false); });
  With(n, ptr, "once",
       [&](const Node& x, const Ptr& p) { g.once = in.Bool(x, p).value_or(false); });
  With(n, ptr, "graph",
       [&](const Node& x, const Ptr& p) { g.graph = in.Bool(x, p).value_or(false); });
  With(n, ptr, "batch", [&](const Node& x, const Ptr& p) { g.batch = in.String(x, p); });
  With(n, ptr, "calls", [&](const Node& x, const Ptr& p) {
    if (x.kind != Kind::kArray) {
      in.sink().Error(
          std::string(codes::kType), p,
          fmt::format("expected an array of calls, got {}", Article(json::KindName(x.kind))));
      return;
    }
    g.calls.reserve(x.items.size());
    for (size_t i = 0; i < x.items.size(); ++i)
      g.calls.push_back(BuildCall(in, m, x.items[i], Ptr(p, i)));
  });
  return g;
}

// Each member of the object at `key` becomes one entity via `build`. A member's
// subtree is released once its entity is built: the model replaces it, and the
// peak memory of a large manifest stays near the larger of the two, not their sum.
template <typename T, typename F>
void BuildEach(Fields& in, Node& root, std::string_view key, std::vector<T>& out, F&& build) {
  const Ptr top;
  for (auto& [k, x] : root.members) {
    if (k != key) continue;
    const Ptr p(top, key);
    if (!in.Object(x, p, fmt::format("{} map", key))) return;
    out.reserve(out.size() + x.members.size());
    for (const auto& [name, node] : x.members) out.push_back(build(name, node, Ptr(p, name)));
    x = Node{};
    return;
  }
}

void BuildHeader(Fields& in, Manifest& m, const Node& root) {
  const Node* schema = root.Find("schema");
  if (schema == nullptr) {
    in.sink().Error(std::string(codes::kSchema), "", "missing \"schema\"", "add \"schema\": 1");
  } else if (schema->kind != Kind::kInt || schema->integer < kFirstSchemaVersion ||
             schema->integer > kSchemaVersion) {
    in.sink().Error(
        std::string(codes::kSchema), "/schema",
        fmt::format("unknown schema {}; this loadplan reads schemas {} to {}",
                    schema->kind == Kind::kInt ? std::to_string(schema->integer)
                                               : std::string(json::KindName(schema->kind)),
                    kFirstSchemaVersion, kSchemaVersion));
  } else {
    m.schema = static_cast<int>(schema->integer);
  }
  With(root, Ptr{}, "name", [&](const Node& x, const Ptr& p) {
    if (auto s = in.String(x, p)) {
      m.name = *s;
      in.Name(*s, p, "manifest", false);
    }
  });
  With(root, Ptr{}, "load", [&](const Node& x, const Ptr& p) { m.load = BuildLoad(in, x, p); });
}

// The order AssignPointers gives, without the pointers (they are set once, at the end).
void SortForLookup(Manifest& m) {
  SortByName(m.vars);
  SortByName(m.buffers);
  SortByName(m.kernels);
  for (Kernel& k : m.kernels) SortByName(k.params);
}

Manifest BuildManifest(Fields& in, Node& root) {
  Manifest m;
  if (!in.Object(root, Ptr{}, "manifest")) return m;
  in.CheckKeys(root, Ptr{}, {"buffers", "kernels", "load", "name", "programs", "schema", "vars"},
               {"name"});
  BuildHeader(in, m, root);
  BuildEach(in, root, "vars", m.vars,
            [&](auto& name, auto& n, auto p) { return BuildVar(in, name, n, p); });
  BuildEach(in, root, "buffers", m.buffers,
            [&](auto& name, auto& n, auto p) { return BuildBuffer(in, name, n, p); });
  BuildEach(in, root, "kernels", m.kernels,
            [&](auto& name, auto& n, auto p) { return BuildKernel(in, name, n, p); });
  SortForLookup(
      m);  // buffers and kernels resolve call arguments; AssignPointers below sets pointers
  std::vector<Program> programs;
  BuildEach(in, root, "programs", programs,
            [&](auto& name, auto& n, auto p) { return BuildProgram(in, m, name, n, p); });
  m.programs = std::move(programs);
  AssignPointers(m);
  return m;
}

// Each error marks the deepest entity whose pointer is the error's pointer or a
// prefix of it (a bad grid dim marks its call, a bad argument only its Arg).
void MarkMalformed(Manifest& m, const std::vector<Diagnostic>& diags) {
  bool any_error = std::any_of(diags.begin(), diags.end(),
                               [](const Diagnostic& d) { return d.severity == Severity::kError; });
  if (!any_error) return;  // nothing to mark: skip indexing every entity
  std::map<std::string, bool*, std::less<>> entities;
  for (Variable& v : m.vars) entities[v.ptr] = &v.malformed;
  for (Buffer& b : m.buffers) entities[b.ptr] = &b.malformed;
  for (Kernel& k : m.kernels) {
    entities[k.ptr] = &k.malformed;
    for (Param& p : k.params) entities[p.ptr] = &p.malformed;
  }
  for (Program& g : m.programs) {
    entities[g.ptr] = &g.malformed;
    for (Call& c : g.calls) {
      entities[c.ptr] = &c.malformed;
      for (Arg& a : c.args) entities[a.ptr] = &a.malformed;
    }
  }
  for (const Diagnostic& d : diags) {
    if (d.severity != Severity::kError) continue;
    std::string_view p = d.pointer;
    while (!p.empty()) {
      if (auto it = entities.find(p); it != entities.end()) {
        *it->second = true;
        break;
      }
      p = p.substr(0, p.rfind('/'));
    }
  }
}

}  // namespace

ParseOutput ParseManifest(std::string_view text, const ParseLimits& limits) {
  ParseOutput out;
  DiagSink sink;
  try {
    if (std::optional<json::Node> root = json::ReadJson(text, limits, sink)) {
      Fields in(sink);
      out.manifest = BuildManifest(in, *root);
      MarkMalformed(*out.manifest, sink.All());
    }
  } catch (const std::exception& e) {  // bad_alloc on a huge document, or a bug: never escape
    out.manifest.reset();
    sink.Error(std::string(codes::kJsonLimits), "",
               fmt::format("could not read the document: {}", e.what()));
  }
  out.diags = sink.Sorted();
  return out;
}

}  // namespace loadplan::verifier
