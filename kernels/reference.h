// CPU reference implementations of the derive kernels: the same KernelArgs as
// LaunchDerive (launch.h), with host pointers. The host backend runs these; a
// GPU test compares them with the CUDA kernels bit for bit.
//
// The MXFP4 recipes are performed literally, step by step as docs/kernels.md ("The
// MXFP4 recipe specification") words them (take up then gate rows, pad, stack
// [up; gate], interleave, 32-row block shuffle, 128x4 swizzle), one expert at a time
// through scratch matrices; the CUDA kernels compose the steps into one gather
// (recipe.h) instead.
// Cost: O(bytes) with three row copies per output row; memory: two matrices of
// one expert's output.
#pragma once

#include <string_view>

#include "kernels/args.h"
#include "kernels/validate_call.h"

namespace loadplan::kernels {

// Validates (validate_call.h) and runs kernel `name` on host memory.
Status RunReference(std::string_view name, const KernelArgs& args);

// Runs an already validated call on host memory.
void RunResolvedReference(const ResolvedCall& call);

}  // namespace loadplan::kernels
