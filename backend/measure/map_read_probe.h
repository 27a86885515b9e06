// The cost of one page of a strided slice's span read through a mapping of its file, the
// figure a map read pays per page (simulator/timing/slice_read.h): what `calibrate` writes as
// the profile's rates.per_page_s.
#pragma once

#include <cstdint>

#include "backend/checkpoint/file_read.h"
#include "base/status.h"

namespace loadplan::backend {

struct MapReadCost {
  double per_page_s = 0;  // one page populated and its run copied, on each of the threads
  uint64_t pages = 0;     // pages a pass populates
  uint32_t threads = 1;   // threads gathering at once
};

// Gathers from `file` (in the page cache: the caller has read it) the way the CUDA backend's
// map reads do (FileMapping::Gather): a fresh mapping of the file each pass, runs of 256 bytes
// 16 KiB apart, 256 runs (4 MiB of span) a gather, `threads` threads at once over disjoint
// gathers, the mapping dropped at the pass's end. per_page_s = the median of 3 passes after a
// warm-up x threads / the pages populated (one page's cost on each thread while all gather),
// never 0. At most `max_bytes` of the file are gathered; a file of fewer gathers than threads
// is gathered by one thread a gather (`threads` says how many). kInvalidInput when the file is
// smaller than one gather; kIo when mapping or a gather fails (the file's name in the message).
base::Result<MapReadCost> ProbeMappedPages(const FileRef& file, uint32_t threads,
                                           uint64_t max_bytes = uint64_t{4} << 30);

}  // namespace loadplan::backend
