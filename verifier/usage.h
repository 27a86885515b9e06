// Usage index: for each buffer, every well-formed use by a call (program, call, param, access).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::verifier {

// One use of a buffer by one call. Collectives use their buffer with access
// readwrite and an empty `param`.
struct Use {
  size_t program = 0;  // index into Manifest::programs
  size_t call = 0;     // index into Program::calls (counts from 0)
  std::string param;   // kernel parameter bound to the buffer ("" for a collective)
  Access access = Access::kReadWrite;
  std::string ptr;  // the argument (or the collective's /buffer) pointer
  // Elements touched: the kernel's extent with the call's scalar arguments
  // substituted (an expression over manifest variables). nullopt for
  // collectives (the whole buffer) and when the extent or a scalar is broken.
  std::optional<Expr> extent;
  bool operator==(const Use&) const = default;
};

// Contract: uses of well-formed programs/calls/args whose kernel, parameter and
// buffer all resolve; anything else is left out, and a buffer named by a use
// that could not be resolved is listed in `partial` (its use set is incomplete,
// so "nothing reads it" style conclusions must skip it). O(total args log n).
struct UsageIndex {
  std::map<std::string, std::vector<Use>, std::less<>> by_buffer;  // uses in program, call order
  std::set<std::string, std::less<>> partial;

  [[nodiscard]] const std::vector<Use>& Of(std::string_view buffer) const;
};

UsageIndex BuildUsage(const Manifest& m);

// The same, with the buffer each kernel argument names already resolved:
// arg_buffer(p, c, a) is m.FindBuffer(*a.buffer) for m.programs[p].calls[c].args[a].
using ArgBufferFn = std::function<const Buffer*(size_t p, size_t c, size_t a)>;
UsageIndex BuildUsage(const Manifest& m, const ArgBufferFn& arg_buffer);

// The scalar expression an argument passes, when it passes one.
std::optional<Expr> ScalarOf(const Arg& a);

// The kernel's extent for `param` with the call's scalar args substituted;
// nullopt when the extent is absent/malformed or names a scalar the call lacks.
std::optional<Expr> CallExtent(const Kernel& k, const Call& c, std::string_view param);

}  // namespace loadplan::verifier
