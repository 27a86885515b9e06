// A fluent C++ API that builds a Manifest: variables, load options, buffers,
// kernel contracts and programs. Checkpoint tensors are declared with one call
// (Checkpoint, or CheckpointParts for a list of them) and Build() decides their
// kind from how programs use them:
//   read at least once, and only by derive programs (never written)  -> source
//   anything else (read by a serving/once program, written, unread)  -> weight
// so a generator can never silently defeat staging (seed review, finding 3).
//
// Misuse (duplicate names, unparsable expressions, an argument that names an
// undeclared buffer or parameter) is returned as errors in BuildResult, never
// thrown. Build() does not run the verifier: Verify() the result for the rules.
#pragma once

#include <concepts>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/dtype.h"
#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::verifier {

// An integer, the text of a size expression ("batch", "min(ctx, 128)"), a ready
// Expr, or, for a buffer parameter of a kernel call, the name of a buffer.
class Value {
 public:
  template <std::integral T>
  Value(T v) {  // NOLINT(google-explicit-constructor): 128 reads like a size
    if constexpr (std::is_unsigned_v<T>) {
      if (static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        v_ = std::string("<integer out of int64 range>");
        return;
      }
    }
    v_ = static_cast<int64_t>(v);
  }
  Value(const char* text) : v_(std::string(text)) {}  // NOLINT
  Value(std::string text) : v_(std::move(text)) {}    // NOLINT
  Value(Expr e) : v_(std::move(e)) {}                 // NOLINT

  // The expression, or an error message ("expected an expression at column 3").
  [[nodiscard]] std::variant<Expr, std::string> ToExpr() const;
  // The text when this holds text (a buffer name), else nullopt.
  [[nodiscard]] const std::string* Text() const { return std::get_if<std::string>(&v_); }

 private:
  std::variant<int64_t, std::string, Expr> v_;
};

using Dims = std::vector<Value>;
using Args = std::vector<std::pair<std::string, Value>>;

// One kernel parameter: a buffer parameter (access, dtype, extent in elements
// over the kernel's scalar parameters) or a scalar.
struct ParamSpec {
  std::string name;
  Access access = Access::kScalar;
  std::optional<base::Dtype> dtype;
  std::optional<Value> extent;
};
ParamSpec ReadParam(std::string name, base::Dtype dtype, Value extent);
ParamSpec WriteParam(std::string name, base::Dtype dtype, Value extent);
ParamSpec ReadWriteParam(std::string name, base::Dtype dtype, Value extent);
ParamSpec ScalarParam(std::string name);

struct KernelSpec {
  std::string name;
  std::vector<ParamSpec> params;
};

// Options of a buffer declaration (each only where the kind allows it; the
// verifier reports misplaced ones).
struct BufferOptions {
  bool exported = false;
  std::optional<uint32_t> lane;
  std::optional<std::string> encoding;  // "fp4_e2m1x2" | "e8m0"
  std::optional<TensorSlice> slice;     // Checkpoint only: the part of the tensor bound
};

struct CallSpec {
  bool collective = false;
  std::string kernel;  // kernel calls
  Args args;
  Dims grid;
  Dims block;
  std::string op;      // collectives: "all_reduce", ...
  std::string buffer;  // collectives
};

// The calls and flags of one program; obtained from ManifestBuilder::AddProgram.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name) : name_(std::move(name)) {}
  ProgramBuilder& Derive(bool on = true) {
    derive_ = on;
    return *this;
  }
  ProgramBuilder& Once(bool on = true) {
    once_ = on;
    return *this;
  }
  ProgramBuilder& Graph(bool on = true) {
    graph_ = on;
    return *this;
  }
  ProgramBuilder& Batch(std::string var) {
    batch_ = std::move(var);
    return *this;
  }
  // A kernel call. A string argument of a buffer parameter names a buffer; any
  // other argument is a scalar expression (over variables).
  ProgramBuilder& Call(std::string kernel, Args args, Dims grid, Dims block = {});
  ProgramBuilder& Collective(std::string op, std::string buffer);

  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  friend class ManifestBuilder;
  std::string name_;
  bool derive_ = false, once_ = false, graph_ = false;
  std::optional<std::string> batch_;
  std::vector<CallSpec> calls_;
};

struct BuildResult {
  Manifest manifest;                // best effort, even with errors
  std::vector<std::string> errors;  // one line each: "buffer `x` declared twice"
  [[nodiscard]] bool ok() const { return errors.empty(); }
};

class ManifestBuilder {
 public:
  explicit ManifestBuilder(std::string name) : name_(std::move(name)) {}

  ManifestBuilder& Var(std::string name, int64_t min, int64_t max);
  ManifestBuilder& Load(uint32_t lanes, uint32_t prefetch);

  // A checkpoint tensor; Build() makes it a source or a weight (see top).
  ManifestBuilder& Checkpoint(std::string name, std::string tensor, base::Dtype dtype, Dims shape,
                              BufferOptions options = {});
  // A buffer of whole checkpoint tensors read one after another, in `tensors` order (the
  // manifest's "tensors": per-expert weights fused at load); each of `dtype`, their bytes
  // summing to the buffer's. Build() makes it a source or a weight, as for Checkpoint.
  ManifestBuilder& CheckpointParts(std::string name, std::vector<std::string> tensors,
                                   base::Dtype dtype, Dims shape, BufferOptions options = {});
  ManifestBuilder& Carry(std::string name, base::Dtype dtype, Dims shape,
                         BufferOptions options = {});
  ManifestBuilder& State(std::string name, base::Dtype dtype, Dims shape,
                         BufferOptions options = {});
  ManifestBuilder& Scratch(std::string name, base::Dtype dtype, Dims shape,
                           BufferOptions options = {});
  ManifestBuilder& Input(std::string name, base::Dtype dtype, Dims shape,
                         BufferOptions options = {});
  ManifestBuilder& Output(std::string name, base::Dtype dtype, Dims shape,
                          BufferOptions options = {});
  ManifestBuilder& Peer(std::string name, base::Dtype dtype, Dims shape,
                        BufferOptions options = {});

  ManifestBuilder& AddKernel(KernelSpec kernel);
  // A new program (plain: serving); set flags on the returned builder. The
  // reference stays valid for the builder's life.
  ProgramBuilder& AddProgram(std::string name);
  ProgramBuilder& AddDerive(std::string name) { return AddProgram(std::move(name)).Derive(); }

  // Sorted, kinds decided, pointers assigned. May be called more than once.
  [[nodiscard]] BuildResult Build() const;

 private:
  struct BufferDecl {
    std::string name;
    std::optional<BufferKind> kind;  // nullopt: checkpoint tensor(s), decided by Build()
    std::string tensor;
    std::optional<std::vector<std::string>> tensors;  // CheckpointParts (then no `tensor`)
    base::Dtype dtype = base::Dtype::kU8;
    Dims shape;
    BufferOptions options;
  };
  ManifestBuilder& AddBuffer(BufferDecl decl);
  void BuildBuffers(BuildResult& r) const;
  void BuildPrograms(BuildResult& r) const;

  std::string name_;
  std::vector<Variable> vars_;
  LoadOptions load_;
  std::vector<BufferDecl> buffers_;
  std::vector<KernelSpec> kernels_;
  std::deque<ProgramBuilder> programs_;  // deque: stable references
};

// The model form of one kernel contract (pointers unset); errors appended on misuse.
Kernel MakeKernel(const KernelSpec& spec, std::vector<std::string>& errors);

}  // namespace loadplan::verifier
