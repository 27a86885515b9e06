// Helpers shared by the mutators.
#include "fuzz/mutate_util.h"

#include <set>

#include "examples/kernels.h"
#include "verifier/diag.h"
#include "verifier/writer.h"

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
    if (b.tensor) taken.insert(*b.tensor);
  }
  std::string name = stem;
  for (int i = 1; taken.contains(name); ++i) name = stem + "_" + std::to_string(i);
  return name;
}

std::optional<int64_t> Count(const Buffer& b) {
  return Evaluate(ElementCount(b), {}).value;
}

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

namespace {

bool SameContract(const Kernel& a, const Kernel& b) {
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    const Param &p = a.params[i], &q = b.params[i];
    if (p.name != q.name || p.access != q.access || p.dtype != q.dtype || p.extent != q.extent) return false;
  }
  return true;
}

const Kernel* Standard(std::string_view name) {
  static const std::vector<Kernel> kStandard = examples::StandardKernels();
  for (const Kernel& k : kStandard) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace

bool EnsureStandardKernel(Manifest& m, std::string_view kernel) {
  const Kernel* standard = Standard(kernel);
  if (standard == nullptr) return false;
  for (const Kernel& k : m.kernels) {
    if (k.name == kernel) return SameContract(k, *standard);
  }
  m.kernels.push_back(*standard);
  return true;
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
        const Kernel* s = Standard(call.kernel);
        if (call.kernel != "copy" && call.kernel != "cast_bf16_f32") continue;
        if (k == nullptr || s == nullptr || !SameContract(*k, *s) || !ScalarArg(call, "n")) continue;
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

void AddBuffer(Manifest& m, Buffer b) { m.buffers.push_back(std::move(b)); }

Program& AddProgram(Manifest& m, Program p) {
  m.programs.push_back(std::move(p));
  return m.programs.back();
}

Call CopyCall(const std::string& src, const std::string& dst, int64_t n) {
  return Call{.kernel = "copy",
              .args = {Arg{.param = "dst", .buffer = dst}, Arg{.param = "n", .scalar = Expr::Const(n)},
                       Arg{.param = "src", .buffer = src}},
              .grid = {Expr::Const(1)}};
}

Buffer U8Carry(const std::string& name, int64_t n, bool exported) {
  return Buffer{.name = name, .kind = BufferKind::kCarry, .dtype = Dtype::kU8, .shape = {Expr::Const(n)},
                .exported = exported};
}

std::string U8Input(Manifest& m, int64_t at_least, const Pick& pick) {
  std::vector<std::string> fits;
  for (const Buffer* b : Buffers(m, {BufferKind::kSource, BufferKind::kWeight})) {
    if (b->dtype == Dtype::kU8 && Count(*b).value_or(-1) >= at_least) fits.push_back(b->name);
  }
  if (!fits.empty()) return Choose(fits, pick);
  std::string name = Fresh(m, "fuzz.raw");
  AddBuffer(m, Buffer{.name = name, .kind = BufferKind::kSource, .tensor = Fresh(m, "fuzz.tensor"),
                      .dtype = Dtype::kU8, .shape = {Expr::Const(at_least)}});
  return name;
}

void AddOneParamProgram(Manifest& m, const std::string& program, const Buffer& b, Access access, int64_t n) {
  const std::string kernel = Fresh(m, program + ".k");
  m.kernels.push_back(Kernel{.name = kernel,
                             .params = {Param{.name = "n", .access = Access::kScalar},
                                        Param{.name = "p", .access = access, .dtype = b.dtype, .extent = Expr::Var("n")}}});
  Program p{.name = program};
  p.calls.push_back(Call{.kernel = kernel,
                         .args = {Arg{.param = "n", .scalar = Expr::Const(n)}, Arg{.param = "p", .buffer = b.name}}});
  AddProgram(m, std::move(p));
}

std::optional<Mutation> Finish(std::string_view name, Manifest m, std::vector<Expected> expected) {
  AssignPointers(m);
  return Mutation{.mutator = std::string(name), .text = WriteManifest(m), .expected = std::move(expected)};
}

std::optional<Mutation> FinishText(std::string_view name, std::string text, std::vector<Expected> expected) {
  return Mutation{.mutator = std::string(name), .text = std::move(text), .expected = std::move(expected)};
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
