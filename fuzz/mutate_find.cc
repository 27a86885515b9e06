// Finding a mutation's targets in a manifest, and pointers to them.
#include "fuzz/mutate_find.h"

#include <set>

#include "builders/kernels.h"
#include "verifier/diag.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT: the model's types throughout

std::string Ptr(std::initializer_list<std::string_view> tokens) {
  std::string p;
  for (std::string_view t : tokens) p = ChildPointer(p, t);
  return p;
}

std::string CallPtr(const Manifest& m, CallRef c) {
  return Ptr({"programs", m.programs[c.program].name, "calls", std::to_string(c.call)});
}

std::string ArgPtr(const Manifest& m, CallRef c, std::string_view param) {
  return ChildPointer(ChildPointer(CallPtr(m, c), "args"), param);
}

std::string Fresh(const Manifest& m, std::string stem) {
  std::set<std::string, std::less<>> taken;
  for (const Variable& v : m.vars) taken.insert(v.name);
  for (const Kernel& k : m.kernels) taken.insert(k.name);
  for (const Program& p : m.programs) taken.insert(p.name);
  for (const Buffer& b : m.buffers) {
    taken.insert(b.name);
    for (std::string_view t : BoundTensors(b)) taken.emplace(t);
  }
  std::string name = stem;
  for (int i = 1; taken.contains(name); ++i) name = stem + "_" + std::to_string(i);
  return name;
}

std::optional<int64_t> Count(const Buffer& b) { return ValueAt(ElementCount(b), {}); }

std::optional<int64_t> ScalarArg(const Call& c, std::string_view param) {
  const Arg* a = FindArg(c, param);
  if (a == nullptr || !a->scalar || !a->scalar->IsConst()) return std::nullopt;
  return a->scalar->value;
}

Arg* MutableArg(Call& c, std::string_view param) {
  for (Arg& a : c.args) {
    if (a.param == param) return &a;
  }
  return nullptr;
}

bool SameContract(const Kernel& a, const Kernel& b) {
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    const Param &p = a.params[i], &q = b.params[i];
    if (p.name != q.name || p.access != q.access || p.dtype != q.dtype || p.extent != q.extent)
      return false;
  }
  return true;
}

const Kernel* StandardKernel(std::string_view name) {
  static const std::vector<Kernel> kStandard = builders::StandardKernels();
  for (const Kernel& k : kStandard) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<CallRef> KernelCalls(const Manifest& m, bool derive, bool copy_like) {
  std::vector<CallRef> out;
  for (size_t p = 0; p < m.programs.size(); ++p) {
    const Program& prog = m.programs[p];
    if (prog.derive != derive) continue;
    for (size_t c = 0; c < prog.calls.size(); ++c) {
      const Call& call = prog.calls[c];
      if (call.type != CallType::kKernel) continue;
      if (copy_like) {
        const Kernel* k = m.FindKernel(call.kernel);
        const Kernel* s = StandardKernel(call.kernel);
        if (call.kernel != "copy" && call.kernel != "cast_bf16_f32") continue;
        if (k == nullptr || s == nullptr || !SameContract(*k, *s) || !ScalarArg(call, "n"))
          continue;
        const Arg *src = FindArg(call, "src"), *dst = FindArg(call, "dst");
        if (src == nullptr || dst == nullptr || !src->buffer || !dst->buffer) continue;
      }
      out.push_back({p, c});
    }
  }
  return out;
}

std::vector<size_t> Programs(const Manifest& m, bool derive) {
  std::vector<size_t> out;
  for (size_t p = 0; p < m.programs.size(); ++p) {
    if (m.programs[p].derive == derive) out.push_back(p);
  }
  return out;
}

std::vector<const Buffer*> Buffers(const Manifest& m, std::initializer_list<BufferKind> kinds) {
  std::vector<const Buffer*> out;
  for (const Buffer& b : m.buffers) {
    for (BufferKind k : kinds) {
      if (b.kind == k) out.push_back(&b);
    }
  }
  return out;
}

std::vector<std::pair<CallRef, std::string>> ReadBufferArgs(const verifier::Manifest& m) {
  std::vector<std::pair<CallRef, std::string>> reads;
  for (bool derive : {true, false}) {
    for (CallRef c : KernelCalls(m, derive)) {
      const verifier::Call& call = m.programs[c.program].calls[c.call];
      const verifier::Kernel* k = m.FindKernel(call.kernel);
      for (const verifier::Arg& a : call.args) {
        const verifier::Param* p = k ? verifier::FindParam(*k, a.param) : nullptr;
        if (a.buffer && p && p->access == verifier::Access::kRead) reads.push_back({c, a.param});
      }
    }
  }
  return reads;
}

}  // namespace loadplan::fuzz::mut
