// Usage index: builds, for each buffer, the list of well-formed uses by calls.
#include "verifier/usage.h"

#include <utility>

#include "verifier/diag.h"

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

void AddKernelCall(const Manifest& m, size_t p, size_t i, UsageIndex& u) {
  const Call& c = m.programs[p].calls[i];
  const Kernel* k = m.FindKernel(c.kernel);
  if (k == nullptr || k->malformed) {
    MarkPartial(u, c);
    return;
  }
  for (const Arg& a : c.args) {
    if (!a.buffer) continue;
    const Param* prm = FindParam(*k, a.param);
    const Buffer* b = m.FindBuffer(*a.buffer);
    if (a.malformed || prm == nullptr || prm->malformed || prm->access == Access::kScalar ||
        b == nullptr) {
      u.partial.insert(*a.buffer);
      continue;
    }
    u.by_buffer[*a.buffer].push_back(Use{.program = p, .call = i, .param = a.param,
                                         .access = prm->access, .ptr = a.ptr,
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

std::optional<Expr> CallExtent(const Kernel& k, const Call& c, std::string_view param) {
  const Param* p = FindParam(k, param);
  if (p == nullptr || p->malformed || !p->extent) return std::nullopt;
  std::map<std::string, Expr> bindings;
  for (const std::string& name : Variables(*p->extent)) {
    const Param* sp = FindParam(k, name);
    const Arg* a = FindArg(c, name);
    if (sp == nullptr || sp->access != Access::kScalar || a == nullptr) return std::nullopt;
    std::optional<Expr> v = ScalarOf(*a);
    if (!v) return std::nullopt;
    bindings.emplace(name, std::move(*v));
  }
  return Substitute(*p->extent, bindings);
}

UsageIndex BuildUsage(const Manifest& m) {
  UsageIndex u;
  for (size_t p = 0; p < m.programs.size(); ++p) {
    const Program& prog = m.programs[p];
    for (size_t i = 0; i < prog.calls.size(); ++i) {
      const Call& c = prog.calls[i];
      if (prog.malformed || c.malformed) {
        MarkPartial(u, c);
      } else if (c.type == CallType::kCollective) {
        if (m.FindBuffer(c.buffer) == nullptr) {
          u.partial.insert(c.buffer);
        } else {
          u.by_buffer[c.buffer].push_back(Use{.program = p, .call = i, .param = {},
                                              .access = Access::kReadWrite,
                                              .ptr = ChildPointer(c.ptr, "buffer"), .extent = {}});
        }
      } else {
        AddKernelCall(m, p, i, u);
      }
    }
  }
  return u;
}

}  // namespace loadplan::verifier
