// What a finished load leaves behind, checked and saved through any backend that can copy its
// resident bytes out: the byte-for-byte comparison with the host backend (`loadplan run
// --check`, the GPU tests) and the derived carries written as a safetensors file
// (`--save-derived`). Both take plan buffers (dtype, shape, bytes) and need no manifest.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "backend/checkpoint/checkpoint.h"
#include "backend/save_file.h"
#include "base/status.h"
#include "simulator/plan.h"

namespace loadplan::backend {

// Copies [offset, offset + out.size()) of resident buffer `buffer` into `out`.
using ReadResident = std::function<base::Status(simulator::BufferId buffer, uint64_t offset,
                                                std::span<uint8_t> out)>;

struct HostComparison {
  std::string host_error;               // the host backend's own failure, if any
  uint32_t compared = 0;                // buffers compared
  uint64_t bytes = 0;                   // bytes compared
  std::vector<std::string> mismatches;  // "l0.fc1_w: first difference at byte 4096"
  [[nodiscard]] bool ok() const { return host_error.empty() && mismatches.empty(); }
};

// Runs the host backend on the same plan and checkpoint and compares every resident weight
// and (with `derive`) every derived carry byte for byte with what `read` returns.
HostComparison CompareWithHost(const simulator::LoadPlan& plan, const Checkpoint& checkpoint,
                               const ReadResident& read, bool derive);

struct SaveOptions {
  uint64_t chunk_bytes = uint64_t{8} << 20;  // one `read` and one write each
  WriteFaults faults;                        // test only: injected write errors
  std::stop_token stop;                      // checked before each chunk: kCancelled
};

// Writes every derived carry (simulator::DerivedCarries) with its dtype and shape into
// DIR/derived.safetensors (metadata: the manifest's name); returns the file's path. Creates
// DIR. The bytes go to a temporary beside it (AtomicFile: fsynced, renamed at the end): a
// failed write (ENOSPC, EACCES, EIO) or copy is a kIo / kDevice error naming the file, the
// tensor and its byte offset, the temporary is removed and a previous derived.safetensors
// stays as it was. A stop request ends it the same way, as kCancelled.
base::Result<std::string> SaveDerived(const simulator::LoadPlan& plan, const ReadResident& read,
                                      const std::string& dir, const SaveOptions& options = {});

}  // namespace loadplan::backend
