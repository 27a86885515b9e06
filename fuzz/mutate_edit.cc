// Editing a manifest for a mutation, and the finished Mutation.
#include "fuzz/mutate_edit.h"

#include "verifier/diag.h"
#include "verifier/writer.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT: the model's types throughout

bool EnsureStandardKernel(Manifest& m, std::string_view kernel) {
  const Kernel* standard = StandardKernel(kernel);
  if (standard == nullptr) return false;
  for (const Kernel& k : m.kernels) {
    if (k.name == kernel) return SameContract(k, *standard);
  }
  m.kernels.push_back(*standard);
  return true;
}

void AddBuffer(Manifest& m, Buffer b) { m.buffers.push_back(std::move(b)); }

Program& AddProgram(Manifest& m, Program p) {
  m.programs.push_back(std::move(p));
  return m.programs.back();
}

Call CopyCall(const std::string& src, const std::string& dst, int64_t n) {
  return Call{
      .kernel = "copy",
      .args = {Arg{.param = "dst", .buffer = dst}, Arg{.param = "n", .scalar = Expr::Const(n)},
               Arg{.param = "src", .buffer = src}},
      .grid = {Expr::Const(1)}};
}

Buffer U8Carry(const std::string& name, int64_t n, bool exported) {
  return Buffer{.name = name,
                .kind = BufferKind::kCarry,
                .dtype = base::Dtype::kU8,
                .shape = {Expr::Const(n)},
                .exported = exported};
}

std::string U8Input(Manifest& m, int64_t at_least, const Pick& pick) {
  std::vector<std::string> fits;
  for (const Buffer* b : Buffers(m, {BufferKind::kSource, BufferKind::kWeight})) {
    if (b->dtype == base::Dtype::kU8 && Count(*b).value_or(-1) >= at_least) fits.push_back(b->name);
  }
  if (!fits.empty()) return Choose(fits, pick);
  std::string name = Fresh(m, "fuzz.raw");
  AddBuffer(m, Buffer{.name = name,
                      .kind = BufferKind::kSource,
                      .tensor = Fresh(m, "fuzz.tensor"),
                      .dtype = base::Dtype::kU8,
                      .shape = {Expr::Const(at_least)}});
  return name;
}

void AddOneParamProgram(Manifest& m, const std::string& program, const Buffer& b, Access access,
                        int64_t n) {
  const std::string kernel = Fresh(m, program + ".k");
  m.kernels.push_back(Kernel{
      .name = kernel,
      .params = {
          Param{.name = "n", .access = Access::kScalar},
          Param{.name = "p", .access = access, .dtype = b.dtype, .extent = Expr::Var("n")}}});
  Program p{.name = program};
  p.calls.push_back(Call{
      .kernel = kernel,
      .args = {Arg{.param = "n", .scalar = Expr::Const(n)}, Arg{.param = "p", .buffer = b.name}}});
  AddProgram(m, std::move(p));
}

std::optional<Mutation> Finish(std::string_view name, Manifest m, std::vector<Expected> expected) {
  AssignPointers(m);
  return Mutation{
      .mutator = std::string(name), .text = WriteManifest(m), .expected = std::move(expected)};
}

std::optional<Mutation> FinishText(std::string_view name, std::string text,
                                   std::vector<Expected> expected) {
  return Mutation{
      .mutator = std::string(name), .text = std::move(text), .expected = std::move(expected)};
}

}  // namespace loadplan::fuzz::mut
