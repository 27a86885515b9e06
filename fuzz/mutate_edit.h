// Internal to the mutators (fuzz/mutate_*.cc): editing a manifest (standard kernels,
// fresh buffers and programs) and turning the edited model into a Mutation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/mutate_find.h"
#include "fuzz/mutators.h"
#include "verifier/manifest.h"

namespace loadplan::fuzz::mut {

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
void AddOneParamProgram(verifier::Manifest& m, const std::string& program,
                        const verifier::Buffer& b, verifier::Access access, int64_t n);

std::optional<Mutation> Finish(std::string_view name, verifier::Manifest m,
                               std::vector<Expected> expected);
std::optional<Mutation> FinishText(std::string_view name, std::string text,
                                   std::vector<Expected> expected);

}  // namespace loadplan::fuzz::mut
