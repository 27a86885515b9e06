// The parts of Calibrate (calibrate.h), private to backend/cuda.
#pragma once

#include <functional>
#include <string>

#include "backend/measure/calibrate.h"

namespace loadplan::backend {

using Note = std::function<void(const std::string&)>;

// Every registry kernel on a representative gpt-oss / DeepSeek-sized case: bytes read +
// written per second (median of 5 after 2 warm-ups), the launch overhead, the default rate.
base::Status CalibrateKernels(int device, simulator::timing::MachineProfile& p, const Note& note);

// The scratch file's read and pipeline rates, hot and evicted, and the per-chunk cost.
base::Status CalibrateFiles(const CalibrateOptions& o, simulator::timing::MachineProfile& p,
                            const Note& note);

}  // namespace loadplan::backend
