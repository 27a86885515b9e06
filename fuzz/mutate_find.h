// Internal to the mutators (fuzz/mutate_*.cc): finding what a mutation needs in a
// manifest (calls, programs, buffers, constant counts) and JSON pointers to it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/mutators.h"
#include "verifier/diag.h"
#include "verifier/manifest.h"

namespace loadplan::fuzz::mut {

// A call: indices into Manifest::programs and Program::calls.
struct CallRef {
  size_t program = 0;
  size_t call = 0;
};

template <typename T>
const T& Choose(const std::vector<T>& v, const Pick& pick) {
  return v[pick(v.size())];
}

// A JSON pointer from unescaped tokens: Ptr({"programs", "a/b", "calls", "0"}) ==
// "/programs/a~1b/calls/0".
std::string Ptr(std::initializer_list<std::string_view> tokens);
std::string ArgPtr(const verifier::Manifest& m, CallRef c, std::string_view param);
std::string CallPtr(const verifier::Manifest& m, CallRef c);

// A name no variable, buffer, kernel, program or tensor of `m` uses: `stem`, or `stem` with a
// suffix.
std::string Fresh(const verifier::Manifest& m, std::string stem);

// Whether two kernel declarations have the same parameter contract.
bool SameContract(const verifier::Kernel& a, const verifier::Kernel& b);
// The standard contract of `name` (copy, cast_bf16_f32, ...; examples/kernels.h), or nullptr.
const verifier::Kernel* StandardKernel(std::string_view name);

// Kernel calls of derive (or serving) programs; of the standard copy/cast kernels only,
// with a constant `n`, when `copy_like`.
std::vector<CallRef> KernelCalls(const verifier::Manifest& m, bool derive, bool copy_like = false);
std::vector<size_t> Programs(const verifier::Manifest& m, bool derive);
std::vector<const verifier::Buffer*> Buffers(const verifier::Manifest& m,
                                             std::initializer_list<verifier::BufferKind> kinds);

// The constant element count of a fixed-shape buffer.
std::optional<int64_t> Count(const verifier::Buffer& b);
// The constant value of scalar argument `param` of a call.
std::optional<int64_t> ScalarArg(const verifier::Call& c, std::string_view param);
verifier::Arg* MutableArg(verifier::Call& c, std::string_view param);
// Every (kernel call, param) of derive then serving calls whose argument is a buffer
// bound to a read-only parameter.
std::vector<std::pair<CallRef, std::string>> ReadBufferArgs(const verifier::Manifest& m);

}  // namespace loadplan::fuzz::mut
