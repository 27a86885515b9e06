// Internal to the mutators (fuzz/mutate_*.cc): finding what a mutation needs in a
// manifest, fresh names, pointers, and turning an edited model into a Mutation.
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

// A JSON pointer from unescaped tokens: Ptr({"programs", "a/b", "calls", "0"}) == "/programs/a~1b/calls/0".
std::string Ptr(std::initializer_list<std::string_view> tokens);
std::string ArgPtr(const verifier::Manifest& m, CallRef c, std::string_view param);
std::string CallPtr(const verifier::Manifest& m, CallRef c);

// A name no variable, buffer, kernel, program or tensor of `m` uses: `stem`, or `stem` with a suffix.
std::string Fresh(const verifier::Manifest& m, std::string stem);

// Kernel calls of derive (or serving) programs; of the standard copy/cast kernels only,
// with a constant `n`, when `copy_like`.
std::vector<CallRef> KernelCalls(const verifier::Manifest& m, bool derive, bool copy_like = false);
std::vector<size_t> Programs(const verifier::Manifest& m, bool derive);
std::vector<const verifier::Buffer*> Buffers(const verifier::Manifest& m, std::initializer_list<verifier::BufferKind> kinds);

// The constant element count of a fixed-shape buffer.
std::optional<int64_t> Count(const verifier::Buffer& b);
// The constant value of scalar argument `param` of a call.
std::optional<int64_t> ScalarArg(const verifier::Call& c, std::string_view param);
verifier::Arg* MutableArg(verifier::Call& c, std::string_view param);
// Every (kernel call, param) of derive then serving calls whose argument is a buffer
// bound to a read-only parameter.
std::vector<std::pair<CallRef, std::string>> ReadBufferArgs(const verifier::Manifest& m);

// Adds the standard contract of `kernel` (copy, cast_bf16_f32, ...) when absent; false
// when a kernel of that name with another contract is there.
bool EnsureStandardKernel(verifier::Manifest& m, std::string_view kernel);
// A U8 source or weight with a constant count >= `at_least`, or a fresh U8 source of that size.
std::string U8Input(verifier::Manifest& m, int64_t at_least, const Pick& pick);
// Appends a buffer / program (the model is re-sorted by Finish).
void AddBuffer(verifier::Manifest& m, verifier::Buffer b);
verifier::Program& AddProgram(verifier::Manifest& m, verifier::Program p);
verifier::Call CopyCall(const std::string& src, const std::string& dst, int64_t n);
verifier::Buffer U8Carry(const std::string& name, int64_t n, bool exported = false);
// A serving program calling a fresh kernel with one buffer parameter `p` (extent n = `n`).
void AddOneParamProgram(verifier::Manifest& m, const std::string& program, const verifier::Buffer& b,
                        verifier::Access access, int64_t n);

std::optional<Mutation> Finish(std::string_view name, verifier::Manifest m, std::vector<Expected> expected);
std::optional<Mutation> FinishText(std::string_view name, std::string text, std::vector<Expected> expected);

}  // namespace loadplan::fuzz::mut
