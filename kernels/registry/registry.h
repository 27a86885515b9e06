// The kernel registry: one typed row per derive kernel the backends implement (name,
// one-line doc, parameter contract, preconditions). The single source of truth for the
// verifier (rules P9, P10), the examples' standard declarations, call validation
// (kernels/validate_call.h), the CPU reference and the CUDA launcher (each dispatches on
// KernelId with an exhaustive switch), and `loadplan kernels`. docs/kernels.md explains
// every row and how to add one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/access.h"
#include "base/dtype.h"
#include "expr/expr.h"

namespace loadplan::kernels {

// One id per registry row, in name order (Kernels()[i].id == KernelId(i)).
enum class KernelId : uint8_t {
  kCastBf16F32,
  kCopy,
  kFp8BlockBf16,
  kMxfp4Dequant,
  kMxfp4ExpertsBf16,
  kMxfp4Fc1Bias,
  kMxfp4Fc1Scales,
  kMxfp4Fc1Weight,
  kMxfp4Fc2Bias,
  kMxfp4Fc2Scales,
  kMxfp4Fc2Weight,
};
inline constexpr size_t kKernelCount = 11;

// A buffer parameter (access read/write/readwrite, dtype, extent in elements of that
// dtype over the kernel's scalar parameters; docs/kernels.md "Contracts") or a scalar
// (access kScalar, no dtype, no extent).
struct ParamSpec {
  std::string name;
  base::Access access = base::Access::kScalar;
  std::optional<base::Dtype> dtype;
  std::optional<expr::Expr> extent;
  bool operator==(const ParamSpec&) const = default;
};

enum class Compare : uint8_t { kEq, kLe, kLt, kGe, kGt };

// `lhs cmp rhs` over the kernel's scalars, e.g. "k_pad % 128 == 0", with the reason.
struct Precondition {
  std::string text;  // as written in the table: "k_pad % 128 == 0"
  expr::Expr lhs, rhs;
  Compare cmp = Compare::kEq;
  std::string subject;  // the first scalar the text names: where a diagnostic points
  std::string why;      // "the 128x4 scale swizzle works on 128-row bands"
};

struct KernelSpec {
  KernelId id = KernelId::kCopy;
  std::string name;
  std::string doc;                // one line
  std::vector<ParamSpec> params;  // sorted by name
  // Every scalar is >= 0 (listed first, one per scalar), then the kernel's own.
  std::vector<Precondition> preconditions;
};

// Every kernel, sorted by name.
std::span<const KernelSpec> Kernels();
// The kernel named `name`, or nullptr when the backends implement no such kernel.
const KernelSpec* FindKernel(std::string_view name);
const KernelSpec& Spec(KernelId id);
std::string_view KernelName(KernelId id);
// The parameter `name` of `k`, or nullptr.
const ParamSpec* FindParam(const KernelSpec& k, std::string_view name);

// Does `p` hold at these scalar values? nullopt when a side does not evaluate (an
// unbound scalar, overflow, division by zero).
std::optional<bool> Holds(const Precondition& p, const expr::Assignment& scalars);
// The preconditions of `k` that do not hold, or do not evaluate, at `scalars`, in table order.
std::vector<const Precondition*> Violated(const KernelSpec& k, const expr::Assignment& scalars);

// "<=" for kLe, ...
std::string_view CompareText(Compare c);

}  // namespace loadplan::kernels
