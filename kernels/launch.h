// Running derive kernels on the GPU by name: the uniform launch signature the
// CUDA backend uses. Plain C++ (no CUDA types): a stream is a cudaStream_t
// passed as void* (nullptr: the legacy default stream). Buffers hold device
// pointers. The CPU reference with the same arguments is reference.h's
// RunReference; both validate through validate_call.h and refuse the same calls.
#pragma once

#include <string_view>

#include "kernels/args.h"
#include "kernels/validate_call.h"

namespace loadplan::kernels {

// Validates the call (contract, scalars, extents fit, no overlap, element
// alignment of BF16/F32 pointers) and enqueues it on `stream`. Returns once the
// work is enqueued; errors of the launch itself are reported, errors of the
// asynchronous execution surface at the caller's next synchronisation.
Status LaunchDerive(std::string_view name, const KernelArgs& args, void* stream);

// Enqueues an already validated call.
Status LaunchResolved(const ResolvedCall& call, void* stream);

}  // namespace loadplan::kernels
