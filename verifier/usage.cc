// Usage index: builds, for each buffer, the list of well-formed uses by calls.
#include "verifier/usage.h"

#include <utility>

#include "verifier/diag.h"
#include "verifier/name_index.h"

namespace loadplan::verifier {
namespace {

// Records the buffer a broken use names, so lints know its use set is incomplete.
void MarkPartial(UsageIndex& u, const Call& c) {
  if (c.type == CallType::kCollective) {
    if (!c.buffer.empty()) u.partial.insert(c.buffer);
    return;
  }
  for (const Arg& a : c.args) {
    if (a.buffer) u.partial.insert(*a.buffer);
  }
}

// Buffer lookups for one BuildUsage: by hash when m.buffers is sorted (then it
// agrees with Manifest::FindBuffer), else Manifest::FindBuffer itself. Uses are
// grouped by the position of the buffer found.
struct Builder {
  const Manifest& m;
  NameIndex index;
  const ArgBufferFn* arg_buffer = nullptr;  // resolved argument buffers, when given
  UsageIndex& u;
  std::vector<std::vector<Use>> per_buffer;

  std::optional<size_t> Find(std::string_view name) const {
    if (!index.empty()) return index.Find(name);
    return Position(m.FindBuffer(name));
  }
  std::optional<size_t> Position(const Buffer* b) const {
    if (b == nullptr) return std::nullopt;
    return static_cast<size_t>(b - m.buffers.data());
  }
  std::optional<size_t> FindArg(size_t p, size_t c, size_t a) const {
    if (arg_buffer != nullptr) return Position((*arg_buffer)(p, c, a));
    return Find(*m.programs[p].calls[c].args[a].buffer);
  }
};

void AddKernelCall(Builder& ub, size_t p, size_t i) {
  const Manifest& m = ub.m;
  UsageIndex& u = ub.u;
  const Call& c = m.programs[p].calls[i];
  const Kernel* k = m.FindKernel(c.kernel);
  if (k == nullptr || k->malformed) {
    MarkPartial(u, c);
    return;
  }
  for (size_t ai = 0; ai < c.args.size(); ++ai) {
    const Arg& a = c.args[ai];
    if (!a.buffer) continue;
    const Param* prm = FindParam(*k, a.param);
    std::optional<size_t> b = ub.FindArg(p, i, ai);
    if (a.malformed || prm == nullptr || prm->malformed || prm->access == Access::kScalar || !b) {
      u.partial.insert(*a.buffer);
      continue;
    }
    ub.per_buffer[*b].push_back(Use{.program = p,
                                    .call = i,
                                    .param = a.param,
                                    .access = prm->access,
                                    .ptr = a.ptr,
                                    .extent = CallExtent(*k, c, a.param)});
  }
}

}  // namespace

const std::vector<Use>& UsageIndex::Of(std::string_view buffer) const {
  static const std::vector<Use> kNone;
  auto it = by_buffer.find(buffer);
  return it == by_buffer.end() ? kNone : it->second;
}

std::optional<Expr> ScalarOf(const Arg& a) {
  if (a.malformed) return std::nullopt;
  if (a.scalar) return a.scalar;
  if (a.buffer) return Expr::Var(*a.buffer);  // a bare name passed to a scalar parameter
  return std::nullopt;
}

namespace {

// `extent` with each scalar parameter replaced by the call's argument; false when a
// name is not a scalar parameter the call passes a usable scalar for.
bool BindScalars(const Kernel& k, const Call& c, const Expr& extent, Expr& out) {
  if (extent.op == ExprOp::kVar) {
    const Param* sp = FindParam(k, extent.name);
    const Arg* a = FindArg(c, extent.name);
    if (sp == nullptr || sp->access != Access::kScalar || a == nullptr) return false;
    std::optional<Expr> v = ScalarOf(*a);
    if (!v) return false;
    out = std::move(*v);
    return true;
  }
  out = Expr{.op = extent.op, .value = extent.value, .name = extent.name};
  out.args.resize(extent.args.size());
  for (size_t i = 0; i < extent.args.size(); ++i) {
    if (!BindScalars(k, c, extent.args[i], out.args[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<Expr> CallExtent(const Kernel& k, const Call& c, std::string_view param) {
  const Param* p = FindParam(k, param);
  if (p == nullptr || p->malformed || !p->extent) return std::nullopt;
  Expr out;
  if (!BindScalars(k, c, *p->extent, out)) return std::nullopt;
  return out;
}

namespace {

UsageIndex Build(const Manifest& m, const ArgBufferFn* arg_buffer) {
  UsageIndex u;
  const bool index = arg_buffer == nullptr && SortedByName(m.buffers);
  Builder ub{.m = m,
             .index = index ? IndexByName(m.buffers) : NameIndex(),
             .arg_buffer = arg_buffer,
             .u = u,
             .per_buffer = std::vector<std::vector<Use>>(m.buffers.size())};
  for (size_t p = 0; p < m.programs.size(); ++p) {
    const Program& prog = m.programs[p];
    for (size_t i = 0; i < prog.calls.size(); ++i) {
      const Call& c = prog.calls[i];
      if (prog.malformed || c.malformed) {
        MarkPartial(u, c);
      } else if (c.type == CallType::kCollective) {
        if (std::optional<size_t> b = ub.Find(c.buffer)) {
          ub.per_buffer[*b].push_back(Use{.program = p,
                                          .call = i,
                                          .param = {},
                                          .access = Access::kReadWrite,
                                          .ptr = ChildPointer(c.ptr, "buffer"),
                                          .extent = {}});
        } else {
          u.partial.insert(c.buffer);
        }
      } else {
        AddKernelCall(ub, p, i);
      }
    }
  }
  // Sorted buffers give the map's order: each insertion lands at the end.
  for (size_t b = 0; b < ub.per_buffer.size(); ++b) {
    if (ub.per_buffer[b].empty()) continue;
    u.by_buffer.emplace_hint(u.by_buffer.end(), m.buffers[b].name, std::move(ub.per_buffer[b]));
  }
  return u;
}

}  // namespace

UsageIndex BuildUsage(const Manifest& m) { return Build(m, nullptr); }

UsageIndex BuildUsage(const Manifest& m, const ArgBufferFn& arg_buffer) {
  return Build(m, &arg_buffer);
}

}  // namespace loadplan::verifier
