// The cost of one small read from the page cache, the figure a strided slice's runs pay each
// (simulator/timing/slice_read.h): what `calibrate` writes as the profile's rates.per_run_s.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace loadplan::backend {

struct RunReadCost {
  double per_run_s = 0;   // one pread's fixed cost, on each of the threads
  double per_byte_s = 0;  // each byte it moves
  uint64_t runs = 0;      // preads timed per size, all threads
  uint32_t threads = 1;   // threads reading at once
};

// Times `runs` preads of 1 KiB and of 4 KiB, 16 KiB apart, from the file open at `fd` (of
// `file_bytes`, in the page cache: the caller has read it), `threads` threads at once over
// disjoint parts of it (as the I/O threads read a column split's runs), each size the median
// of 3 passes after a warm-up; the two sizes give the fixed cost per read and the cost per byte
// on each thread (t(s) = runs / threads x (per_run + s per_byte)). Where noise hides the fixed
// cost (the fit gives 0 or less), the whole 1 KiB read's time stands for it: an upper bound,
// never 0 (0 means "not measured" in a profile). kInvalidInput when the file holds fewer than
// 16 runs a thread; kIo when a read fails or comes short.
base::Result<RunReadCost> ProbeRunReads(int fd, uint64_t file_bytes, uint64_t runs = 65536,
                                        uint32_t threads = 1);

}  // namespace loadplan::backend
