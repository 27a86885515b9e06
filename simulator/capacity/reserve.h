// Device memory the manifest does not hold, as constants a measurement replaces.
#pragma once

#include <cstdint>

namespace loadplan::simulator::capacity {

// The CUDA context and eagerly loaded modules of one loadplan process on the device: about
// 0.5 GiB was seen on the lent H200 beside a load (cudaMemGetInfo's total less free with our
// context and modules loaded, nothing allocated). The default reserve of `loadplan run`'s fit
// check; `loadplan calibrate` measures the machine's own figure (its profile replaces this).
inline constexpr uint64_t kCudaContextReserveBytes = uint64_t{512} << 20;

}  // namespace loadplan::simulator::capacity
