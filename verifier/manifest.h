// The typed manifest model (schema 1). Plain value types; every entity keeps the
// JSON pointer it came from so diagnostics can say where. Collections are sorted
// by name (JSON object key order is not significant).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/access.h"
#include "base/dtype.h"
#include "verifier/expr.h"

namespace loadplan::verifier {

// The newest schema this loadplan reads and writes. 2 adds a buffer's `slice`; a manifest
// without one is written as schema 1, so every schema-1 file reads and prints as before.
inline constexpr int kSchemaVersion = 2;
inline constexpr int kFirstSchemaVersion = 1;

// Parameter access lives in base/access.h (the kernel registry shares it).
using base::Access;
using base::AccessName;
using base::ParseAccess;
using base::Reads;
using base::Writes;

enum class BufferKind : uint8_t {
  kWeight,
  kSource,
  kCarry,
  kState,
  kScratch,
  kInput,
  kOutput,
  kPeer
};

std::optional<BufferKind> ParseBufferKind(std::string_view s);
std::string_view BufferKindName(BufferKind k);
inline bool IsCheckpointBound(BufferKind k) {
  return k == BufferKind::kWeight || k == BufferKind::kSource;
}

struct Variable {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;         // inclusive
  std::string ptr;         // /vars/<name>
  bool malformed = false;  // parse found a problem here (reported); rules skip it
  bool operator==(const Variable&) const = default;
};

struct LoadOptions {
  uint32_t lanes = 1;
  uint32_t prefetch = 0;  // counts derive calls
  std::string ptr;        // /load ("" when absent)
  bool lanes_malformed =
      false;  // "lanes" was reported (wrong type or range); K7 does not range-check lanes
  bool operator==(const LoadOptions&) const = default;
};

// Part of a checkpoint tensor along one dimension (schema 2): elements [start, start + length)
// of dimension `dim`, every other dimension whole. Dim 0 is one contiguous run of the
// tensor's bytes; dim d > 0 is prod(shape[:d]) runs, one per outer index (docs/manifest.md).
// `extent`, optional, is the whole tensor's size along `dim` (checked at preflight): with it the
// plan knows the runs' stride and can weigh reading their covering span (simulator/timing).
struct TensorSlice {
  uint64_t dim = 0;
  uint64_t start = 0;
  uint64_t length = 0;
  std::optional<uint64_t> extent;
  bool operator==(const TensorSlice&) const = default;
};

struct Buffer {
  std::string name;
  BufferKind kind = BufferKind::kWeight;
  std::optional<std::string> tensor;  // checkpoint tensor name (weight, source)
  // Or a list of whole checkpoint tensors read one after another into the buffer, in this
  // order (weight, source; never both, never empty: rules K9, K10).
  std::optional<std::vector<std::string>> tensors;
  std::optional<TensorSlice> slice;  // with `tensor`: the part of it bound (rules K12-K15)
  base::Dtype dtype = base::Dtype::kU8;
  std::vector<Expr> shape;              // elements per dimension
  bool exported = false;                // "export": true
  std::optional<uint32_t> lane;         // explicit load lane (weight, source)
  std::optional<std::string> encoding;  // for `gen`: "fp4_e2m1x2" | "e8m0"
  std::string ptr;                      // /buffers/<name>
  bool malformed = false;               // parse found a problem here (reported); rules skip it
  bool operator==(const Buffer&) const = default;
};

struct Param {
  std::string name;
  Access access = Access::kRead;
  std::optional<base::Dtype> dtype;  // buffer params
  std::optional<Expr> extent;  // buffer params: elements touched, over the kernel's scalar params
  std::string ptr;             // /kernels/<k>/params/<p>
  bool malformed = false;      // parse found a problem here (reported); rules skip it
  bool operator==(const Param&) const = default;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;  // sorted by name
  std::string ptr;
  bool malformed = false;  // parse found a problem here (reported); rules skip it
  bool operator==(const Kernel&) const = default;
};

// One argument of a kernel call: a buffer name or a scalar expression (over variables).
struct Arg {
  std::string param;
  std::optional<std::string> buffer;
  std::optional<Expr> scalar;
  std::string ptr;         // /programs/<p>/calls/<i>/args/<param>
  bool malformed = false;  // parse found a problem here (reported); rules skip it
  bool operator==(const Arg&) const = default;
};

enum class CallType : uint8_t { kKernel, kCollective };

struct Call {
  CallType type = CallType::kKernel;
  std::string kernel;       // kKernel
  std::vector<Arg> args;    // sorted by param name
  std::vector<Expr> grid;   // launch grid (1-3 dims)
  std::vector<Expr> block;  // launch block (optional)
  std::string collective;   // kCollective: "all_reduce", "all_gather", ...
  std::string buffer;       // kCollective: the buffer it runs over
  std::string ptr;          // /programs/<p>/calls/<i>
  bool malformed = false;   // parse found a problem here (reported); rules skip it
  bool operator==(const Call&) const = default;
};

struct Program {
  std::string name;
  bool derive = false;
  bool once = false;
  bool graph = false;
  std::optional<std::string> batch;  // variable a serving program is specialised on
  std::vector<Call> calls;
  std::string ptr;
  bool malformed = false;  // parse found a problem here (reported); rules skip it
  bool operator==(const Program&) const = default;
};

struct Manifest {
  int schema = kFirstSchemaVersion;  // as read; the writer writes 2 where a buffer has a slice
  std::string name;
  std::vector<Variable> vars;  // sorted by name
  LoadOptions load;
  std::vector<Buffer> buffers;    // sorted by name
  std::vector<Kernel> kernels;    // sorted by name
  std::vector<Program> programs;  // sorted by name
  bool operator==(const Manifest&) const = default;

  // Lookups by name (binary search on the sorted vectors); nullptr when absent.
  [[nodiscard]] const Variable* FindVar(std::string_view n) const;
  [[nodiscard]] const Buffer* FindBuffer(std::string_view n) const;
  [[nodiscard]] const Kernel* FindKernel(std::string_view n) const;
  [[nodiscard]] const Program* FindProgram(std::string_view n) const;
  // The variable box: every declared variable with its [min, max].
  [[nodiscard]] Box VarBox() const;
};

// The checkpoint tensors `b` binds, in read order: its `tensor`, then its `tensors` (a
// verified manifest has one or the other on a weight or source, none elsewhere). The views
// point into `b`.
std::vector<std::string_view> BoundTensors(const Buffer& b);

const Param* FindParam(const Kernel& k, std::string_view n);
const Arg* FindArg(const Call& c, std::string_view param);

// Element count of a buffer as an expression (product of dims), and its byte size
// (elements * bits / 8, rounded up) as an expression.
Expr ElementCount(const Buffer& b);
Expr ByteSize(const Buffer& b);
// Bytes that buffer param `p`'s extent touches with `scalars` substituted (elements x dtype
// bits, rounded up to whole bytes); nullopt when it does not evaluate to a non-negative count
// or the byte count overflows. The planner, the plan checker and the backends' contract check
// share this one definition.
std::optional<uint64_t> ExtentBytes(const Param& p, const Assignment& scalars);

// Points the model at a new pointer prefix after sorting; used by the parser and the builder.
void AssignPointers(Manifest& m);

// The parser and the builder give vars, buffers, kernels, each kernel's params, programs
// and each call's args sorted by name (the Find* lookups binary-search them). A hand-built
// model may not be, and no caller has to care: Verify works on a sorted copy and returns it
// as the VerifiedManifest that Plan takes (so a plan's ids always follow the sorted model),
// CheckPlan and ComputePhases sort a copy too, and backends never see a manifest (the plan
// is self-contained). These three are the helpers those entry points use.
[[nodiscard]] bool IsSortedModel(const Manifest& m);
void SortModel(Manifest& m);  // sorts those vectors (stable); pointers are left as they are
// `m` itself when it is sorted (the usual case, O(n) to tell), else a sorted copy made in
// `copy`: the entry points above start with `const Manifest& m = InNameOrder(in, copy);`.
[[nodiscard]] const Manifest& InNameOrder(const Manifest& m, std::optional<Manifest>& copy);

}  // namespace loadplan::verifier
