// The cost of a strided slice read through a mapping of its file, per page of its span and per
// run, the figures a map read pays (simulator/timing/slice_read.h): what `calibrate` writes as
// the profile's rates.per_page_s and rates.per_map_run_s.
#pragma once

#include <cstdint>

#include "backend/checkpoint/file_read.h"
#include "base/status.h"

namespace loadplan::backend {

struct MapReadCost {
  double per_page_s = 0;  // one page of a span faulted in, on each of the threads
  double per_run_s = 0;   // one run copied out of the mapping, beside its bytes, the same way
  uint64_t pages = 0;     // pages the two patterns' passes gather from
  uint64_t runs = 0;      // runs they copy
  uint32_t threads = 1;   // threads gathering at once
};

// Gathers from `file` (in the page cache: the caller has read it) the way the CUDA backend's
// map reads do (FileMapping::Gather), two patterns of 4 MiB spans: runs of 256 bytes 16 KiB
// apart (256 runs over 1,021 pages: the pages' cost) and runs of 16 bytes 64 bytes apart
// (65,536 runs over 1,024 pages: the runs'). Each pass maps the file afresh, gathers on
// `threads` threads at once over disjoint spans and drops the mapping. A gather's seconds on
// one thread (the median of 3 passes after a warm-up x threads / gathers) is pages x
// per_page_s + runs x per_run_s for both patterns, solved for the two (SolveMapCosts). At most
// `max_bytes` of the file are gathered; a file of fewer gathers than threads is gathered by one
// thread a gather (`threads` says how many). kInvalidInput when the file is smaller than one
// gather; kIo when mapping or a gather fails (the file's name in the message).
base::Result<MapReadCost> ProbeMappedPages(const FileRef& file, uint32_t threads,
                                           uint64_t max_bytes = uint64_t{4} << 30);

// The probe's two figures from a gather's seconds on one thread in each pattern (the sparse's
// 1,021 pages and 256 runs, the dense's 1,024 pages and 65,536 runs). Where noise makes the
// run's cost negative it is 0 and the pages take the sparse pattern's whole time; where it
// makes the page's cost negative, a page costs half the sparse time's share and the runs take
// the rest of the dense pattern's time.
MapReadCost SolveMapCosts(double sparse_s, double dense_s);

}  // namespace loadplan::backend
