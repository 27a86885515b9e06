// The load's own checks, shared by `loadplan run` and Python's load(): option bounds and the
// room on the device before anything is allocated.
#include <fmt/format.h>

#include "api/loadplan.h"
#include "backend/cuda/free_memory.h"
#include "base/bytes.h"
#include "simulator/plan_totals.h"
#include "simulator/timing/profile.h"

namespace loadplan::api {
namespace {

base::Status OptionError(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kOption);
}

}  // namespace

base::Status CheckLoadOptions(const LoadOptions& o) {
  constexpr uint64_t kMinChunk = 4 << 10, kMaxChunk = uint64_t{1} << 30;
  if (o.io_threads < 1 || o.io_threads > 256)
    return OptionError(
        fmt::format("io_threads (--io-threads) {} is not in [1, 256]", o.io_threads));
  if (o.chunk_bytes < kMinChunk || o.chunk_bytes > kMaxChunk)
    return OptionError(
        fmt::format("chunk_bytes (--chunk-mib) {} B is not in [4 KiB, 1 GiB]", o.chunk_bytes));
  if (o.read_bytes != 0 && (o.read_bytes < kMinChunk || o.read_bytes > o.chunk_bytes))
    return OptionError(
        fmt::format("read_bytes (--read-mib) {} B is not in [4 KiB, chunk_bytes {} B]",
                    o.read_bytes, o.chunk_bytes));
  if (o.read_bytes != 0 && o.direct_io)
    return OptionError(
        "read_bytes (--read-mib) applies to buffered reads, not direct_io (--direct)");
  return base::Status::Ok();
}

base::Result<DeviceRoom> CheckRoom(const simulator::LoadPlan& plan, int device, uint64_t reserve) {
  const base::Result<backend::DeviceMemInfo> mem = backend::QueryDeviceMemory(device);
  if (!mem.ok()) return mem.status();
  const uint64_t peak = simulator::LoadPeakBytes(plan);
  uint64_t need = 0;
  if (__builtin_add_overflow(peak, reserve, &need)) need = UINT64_MAX;
  if (need <= mem->free)
    return DeviceRoom{.free = mem->free, .total = mem->total, .name = mem->name};
  return base::Status::Error(
             fmt::format(
                 "the load needs {} (resident pool {} + staging arena {}) and a reserve of {} "
                 "beside it (the serving process's CUDA context and modules) = {} ({} B), but "
                 "GPU {} ({}) has {} ({} B) free of {}: {} short. Nothing was allocated",
                 base::FormatBytesAuto(peak), base::FormatBytesAuto(plan.resident_bytes_rounded),
                 base::FormatBytesAuto(plan.arena_bytes_rounded), base::FormatBytesAuto(reserve),
                 base::FormatBytesAuto(need), need, device, mem->name,
                 base::FormatBytesAuto(mem->free), mem->free, base::FormatBytesAuto(mem->total),
                 base::FormatBytesAuto(need - mem->free)),
             base::ErrorKind::kOutOfMemory)
      .WithBytes(need, mem->free);
}

base::Result<simulator::timing::MachineProfile> ReadMachineOption(const std::string& path) {
  base::Result<simulator::timing::MachineProfile> p = simulator::timing::ReadProfileFile(path);
  if (p.ok()) return p;
  return base::Status::Error("machine (--machine): " + p.status().message(),
                             base::ErrorKind::kOption);
}

void ApplyMachine(const simulator::timing::MachineProfile* machine,
                  std::optional<uint32_t> io_threads, std::optional<uint64_t> chunk_bytes,
                  LoadOptions& options) {
  options.io_threads =
      io_threads.value_or(machine ? machine->io_threads : backend::kDefaultIoThreads);
  options.chunk_bytes =
      chunk_bytes.value_or(machine ? machine->chunk_bytes : backend::kDefaultChunkBytes);
  if (machine) {
    options.slice_costs = simulator::timing::SliceCostsOf(*machine, options.direct_io);
  }
}

}  // namespace loadplan::api
