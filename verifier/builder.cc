// The manifest builder: declarations in, a sorted Manifest with decided kinds out.
#include "verifier/builder.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

namespace loadplan::verifier {
namespace {

ParamSpec BufferParam(std::string name, Access access, base::Dtype dtype, Value extent) {
  return ParamSpec{
      .name = std::move(name), .access = access, .dtype = dtype, .extent = std::move(extent)};
}

// Where an error is: the text is made only when there is an error to report (a large
// manifest's builds format nothing on the way).
using Where = std::function<std::string()>;

// Parses `v`, appending "<where>: <error>" on failure.
std::optional<Expr> ExprOf(const Value& v, const Where& where, std::vector<std::string>& errors) {
  auto r = v.ToExpr();
  if (auto* e = std::get_if<Expr>(&r)) return std::move(*e);
  errors.push_back(fmt::format("{}: {}", where(), std::get<std::string>(r)));
  return std::nullopt;
}

std::vector<Expr> DimsOf(const Dims& dims, const Where& where, std::vector<std::string>& errors) {
  std::vector<Expr> out;
  out.reserve(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (auto e = ExprOf(
            dims[i], [&] { return fmt::format("{}[{}]", where(), i); }, errors))
      out.push_back(std::move(*e));
  }
  return out;
}

// Sorts by name (already sorted input, the common case, is left as is) and reports each name
// that occurs more than once.
template <typename T, typename NameOf>
void SortUnique(std::vector<T>& items, NameOf name_of, const Where& what,
                std::vector<std::string>& errors) {
  const auto less = [&](const T& a, const T& b) { return name_of(a) < name_of(b); };
  if (!std::is_sorted(items.begin(), items.end(), less)) {
    // Sort positions, then move each item once (items are large: buffers hold shapes, names).
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return less(items[a], items[b]); });
    std::vector<T> sorted;
    sorted.reserve(items.size());
    for (size_t i : order) sorted.push_back(std::move(items[i]));
    items = std::move(sorted);
  }
  for (size_t i = 1; i < items.size(); ++i) {
    if (name_of(items[i]) == name_of(items[i - 1]) &&
        (i < 2 || name_of(items[i - 2]) != name_of(items[i]))) {
      errors.push_back(fmt::format("{} `{}` declared twice", what(), name_of(items[i])));
    }
  }
}

struct Resolver {
  const std::map<std::string, const Kernel*>& kernels;
  const std::vector<Buffer>& buffers;  // sorted by name
  std::vector<std::string>& errors;

  bool HasBuffer(const std::string& name) const {
    const auto it =
        std::lower_bound(buffers.begin(), buffers.end(), name,
                         [](const Buffer& b, const std::string& n) { return b.name < n; });
    return it != buffers.end() && it->name == name;
  }

  Arg ResolveArg(const Where& where, const Kernel* k, const std::string& param,
                 const Value& v) const {
    Arg arg{.param = param};
    const Param* p = k ? FindParam(*k, param) : nullptr;
    if (k && !p)
      errors.push_back(
          fmt::format("{}: kernel `{}` has no parameter `{}`", where(), k->name, param));
    if (p && p->access != Access::kScalar) {
      const std::string* text = v.Text();
      if (!text) {
        errors.push_back(
            fmt::format("{}: buffer parameter `{}` needs a buffer name", where(), param));
      } else if (!HasBuffer(*text)) {
        errors.push_back(fmt::format("{}: unknown buffer `{}`", where(), *text));
      } else {
        arg.buffer = *text;
      }
      return arg;
    }
    arg.scalar = ExprOf(v, where, errors);
    return arg;
  }

  Call ResolveCall(const Where& where, const CallSpec& spec) const {
    Call call;
    if (spec.collective) {
      call.type = CallType::kCollective;
      call.collective = spec.op;
      call.buffer = spec.buffer;
      if (!HasBuffer(spec.buffer))
        errors.push_back(fmt::format("{}: unknown buffer `{}`", where(), spec.buffer));
      return call;
    }
    call.kernel = spec.kernel;
    auto it = kernels.find(spec.kernel);
    const Kernel* k = it == kernels.end() ? nullptr : it->second;
    if (!k) errors.push_back(fmt::format("{}: unknown kernel `{}`", where(), spec.kernel));
    call.args.reserve(spec.args.size());
    for (const auto& [param, value] : spec.args) {
      call.args.push_back(
          ResolveArg([&, &param = param] { return fmt::format("{} arg `{}`", where(), param); }, k,
                     param, value));
    }
    SortUnique(
        call.args, [](const Arg& a) -> const std::string& { return a.param; },
        [&] { return fmt::format("{}: argument", where()); }, errors);
    call.grid = DimsOf(
        spec.grid, [&] { return fmt::format("{} grid", where()); }, errors);
    call.block = DimsOf(
        spec.block, [&] { return fmt::format("{} block", where()); }, errors);
    return call;
  }
};

// How programs use one buffer: read by a derive call, or touched any other way.
struct Use {
  bool derive_read = false;
  bool other = false;
};

std::map<std::string, Use> Uses(const Manifest& m) {
  std::map<std::string, Use> uses;
  for (const auto& prog : m.programs) {
    for (const auto& call : prog.calls) {
      if (call.type == CallType::kCollective) {
        uses[call.buffer].other = true;
        continue;
      }
      const Kernel* k = m.FindKernel(call.kernel);
      for (const auto& arg : call.args) {
        const Param* p = k ? FindParam(*k, arg.param) : nullptr;
        if (!arg.buffer || !p) continue;
        Use& u = uses[*arg.buffer];
        if (prog.derive && p->access == Access::kRead) {
          u.derive_read = true;
        } else {
          u.other = true;
        }
      }
    }
  }
  return uses;
}

}  // namespace

std::variant<Expr, std::string> Value::ToExpr() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return Expr::Const(*i);
  if (auto* e = std::get_if<Expr>(&v_)) return *e;
  const auto& text = std::get<std::string>(v_);
  base::Result<Expr> r = ParseExpr(text);
  if (r.ok()) return std::move(r).value();
  return fmt::format("cannot parse `{}`: {}", text, r.status().message());
}

ParamSpec ReadParam(std::string name, base::Dtype dtype, Value extent) {
  return BufferParam(std::move(name), Access::kRead, dtype, std::move(extent));
}
ParamSpec WriteParam(std::string name, base::Dtype dtype, Value extent) {
  return BufferParam(std::move(name), Access::kWrite, dtype, std::move(extent));
}
ParamSpec ReadWriteParam(std::string name, base::Dtype dtype, Value extent) {
  return BufferParam(std::move(name), Access::kReadWrite, dtype, std::move(extent));
}
ParamSpec ScalarParam(std::string name) { return ParamSpec{.name = std::move(name)}; }

ProgramBuilder& ProgramBuilder::Call(std::string kernel, Args args, Dims grid, Dims block) {
  calls_.push_back(CallSpec{.kernel = std::move(kernel),
                            .args = std::move(args),
                            .grid = std::move(grid),
                            .block = std::move(block)});
  return *this;
}

ProgramBuilder& ProgramBuilder::Collective(std::string op, std::string buffer) {
  calls_.push_back(CallSpec{.collective = true, .op = std::move(op), .buffer = std::move(buffer)});
  return *this;
}

ManifestBuilder& ManifestBuilder::Var(std::string name, int64_t min, int64_t max) {
  vars_.push_back(Variable{.name = std::move(name), .min = min, .max = max});
  return *this;
}

ManifestBuilder& ManifestBuilder::Load(uint32_t lanes, uint32_t prefetch) {
  load_.lanes = lanes;
  load_.prefetch = prefetch;
  return *this;
}

ManifestBuilder& ManifestBuilder::AddBuffer(BufferDecl decl) {
  buffers_.push_back(std::move(decl));
  return *this;
}

ManifestBuilder& ManifestBuilder::Checkpoint(std::string name, std::string tensor,
                                             base::Dtype dtype, Dims shape, BufferOptions options) {
  return AddBuffer({.name = std::move(name),
                    .tensor = std::move(tensor),
                    .dtype = dtype,
                    .shape = std::move(shape),
                    .options = std::move(options)});
}

ManifestBuilder& ManifestBuilder::CheckpointParts(std::string name,
                                                  std::vector<std::string> tensors,
                                                  base::Dtype dtype, Dims shape,
                                                  BufferOptions options) {
  return AddBuffer({.name = std::move(name),
                    .tensors = std::move(tensors),
                    .dtype = dtype,
                    .shape = std::move(shape),
                    .options = std::move(options)});
}

#define LOADPLAN_BUILDER_KIND(Method, Kind)                                                 \
  ManifestBuilder& ManifestBuilder::Method(std::string name, base::Dtype dtype, Dims shape, \
                                           BufferOptions o) {                               \
    return AddBuffer({.name = std::move(name),                                              \
                      .kind = BufferKind::Kind,                                             \
                      .dtype = dtype,                                                       \
                      .shape = std::move(shape),                                            \
                      .options = std::move(o)});                                            \
  }
LOADPLAN_BUILDER_KIND(Carry, kCarry)
LOADPLAN_BUILDER_KIND(State, kState)
LOADPLAN_BUILDER_KIND(Scratch, kScratch)
LOADPLAN_BUILDER_KIND(Input, kInput)
LOADPLAN_BUILDER_KIND(Output, kOutput)
LOADPLAN_BUILDER_KIND(Peer, kPeer)
#undef LOADPLAN_BUILDER_KIND

ManifestBuilder& ManifestBuilder::AddKernel(KernelSpec kernel) {
  kernels_.push_back(std::move(kernel));
  return *this;
}

ProgramBuilder& ManifestBuilder::AddProgram(std::string name) {
  return programs_.emplace_back(std::move(name));
}

Kernel MakeKernel(const KernelSpec& spec, std::vector<std::string>& errors) {
  Kernel k{.name = spec.name};
  for (const auto& ps : spec.params) {
    Param p{.name = ps.name, .access = ps.access, .dtype = ps.dtype};
    if (ps.extent)
      p.extent = ExprOf(
          *ps.extent,
          [&] { return fmt::format("kernel `{}` param `{}` extent", spec.name, ps.name); }, errors);
    k.params.push_back(std::move(p));
  }
  SortUnique(
      k.params, [](const Param& p) -> const std::string& { return p.name; },
      [&] { return fmt::format("kernel `{}`: parameter", spec.name); }, errors);
  return k;
}

void ManifestBuilder::BuildBuffers(BuildResult& r) const {
  for (const auto& d : buffers_) {
    Buffer b{.name = d.name,
             .kind = d.kind.value_or(BufferKind::kWeight),
             .dtype = d.dtype,
             .shape = DimsOf(
                 d.shape, [&] { return fmt::format("buffer `{}` shape", d.name); }, r.errors),
             .exported = d.options.exported,
             .lane = d.options.lane,
             .encoding = d.options.encoding};
    if (!d.kind && d.tensors) {
      b.tensors = d.tensors;
    } else if (!d.kind) {
      b.tensor = d.tensor;
      b.slice = d.options.slice;
    }
    if (b.slice) r.manifest.schema = std::max(r.manifest.schema, 2);  // slices are schema 2
    r.manifest.buffers.push_back(std::move(b));
  }
  SortUnique(
      r.manifest.buffers, [](const Buffer& b) -> const std::string& { return b.name; },
      [] { return std::string("buffer"); }, r.errors);
}

void ManifestBuilder::BuildPrograms(BuildResult& r) const {
  std::map<std::string, const Kernel*> kernels;
  for (const auto& k : r.manifest.kernels) kernels.emplace(k.name, &k);
  Resolver resolver{kernels, r.manifest.buffers, r.errors};
  for (const auto& pb : programs_) {
    Program p{.name = pb.name_,
              .derive = pb.derive_,
              .once = pb.once_,
              .graph = pb.graph_,
              .batch = pb.batch_};
    for (size_t i = 0; i < pb.calls_.size(); ++i) {
      p.calls.push_back(resolver.ResolveCall(
          [&] { return fmt::format("program `{}` call {}", pb.name_, i); }, pb.calls_[i]));
    }
    r.manifest.programs.push_back(std::move(p));
  }
  SortUnique(
      r.manifest.programs, [](const Program& p) -> const std::string& { return p.name; },
      [] { return std::string("program"); }, r.errors);
}

BuildResult ManifestBuilder::Build() const {
  BuildResult r;
  Manifest& m = r.manifest;
  m.name = name_;
  m.vars = vars_;
  m.load = load_;
  SortUnique(
      m.vars, [](const Variable& v) -> const std::string& { return v.name; },
      [] { return std::string("variable"); }, r.errors);
  BuildBuffers(r);
  for (const auto& spec : kernels_) m.kernels.push_back(MakeKernel(spec, r.errors));
  SortUnique(
      m.kernels, [](const Kernel& k) -> const std::string& { return k.name; },
      [] { return std::string("kernel"); }, r.errors);
  BuildPrograms(r);
  // Finding 3: a checkpoint tensor that only derive programs read is staged, not resident.
  const auto uses = Uses(m);
  for (auto& b : m.buffers) {
    if ((!b.tensor && !b.tensors) || b.kind != BufferKind::kWeight) continue;
    auto it = uses.find(b.name);
    if (it != uses.end() && it->second.derive_read && !it->second.other)
      b.kind = BufferKind::kSource;
  }
  AssignPointers(m);
  return r;
}

}  // namespace loadplan::verifier
