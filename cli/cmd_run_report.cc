// `loadplan run`'s report: predicted vs measured peak, the time split, the rate, the check.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "cli/cmd_run_internal.h"
#include "cli/json_out.h"

namespace loadplan::cli::run {
namespace {

using nlohmann::json;

double GiB(uint64_t b) { return base::ToGiB(b); }
std::string Bytes(uint64_t b) { return base::FormatGiBExact(b, 3, "B"); }
double Rate(uint64_t bytes, double s) { return s > 0 ? bytes / s / 1e9 : 0; }

int64_t Delta(const Report& r, const Measurement& m) {
  return static_cast<int64_t>(m.memory.peak_used_delta) - static_cast<int64_t>(r.predicted_peak);
}

// One probe's line: its figure, or "<label> probe failed: <why>" (nothing when it did not run).
template <typename T, typename Line>
void PrintProbe(const std::optional<base::Result<T>>& probe, std::string_view label, Line line) {
  if (!probe) return;
  const std::string text =
      probe->ok() ? line(**probe)
                  : fmt::format("{} probe failed: {}", label, probe->status().message());
  std::printf("%s\n", text.c_str());
}

void PrintCeilings(const Report& r, double rate) {
  constexpr std::string_view kMore = "              ";  // the lines under "ceilings"
  PrintProbe(r.h2d, "  ceilings    pinned H2D", [&](const backend::Throughput& t) {
    return fmt::format(
        "  ceilings    pinned H2D {:.2f} GB/s (1 GiB, 4 streams): this load ran at {:.3f} of it",
        t.gbps(), t.gbps() > 0 ? rate / t.gbps() : 0.0);
  });
  PrintProbe(r.host_read, fmt::format("{}host read", kMore), [&](const backend::Throughput& t) {
    return fmt::format("{}host read (page cache -> pinned, {} threads) {:.2f} GB/s", kMore,
                       r.io_threads, t.gbps());
  });
  PrintProbe(
      r.shared, fmt::format("{}both at once:", kMore), [&](const backend::SharedCeilings& c) {
        return c.h2d.bytes == 0
                   ? fmt::format(
                         "{}both at once: the reads were too short for 3 copy rounds (256 MiB) "
                         "inside them",
                         kMore)
                   : fmt::format(
                         "{}both at once: pinned H2D {:.2f} GB/s beside a host read of {:.2f} GB/s",
                         kMore, c.h2d.gbps(), c.read.gbps());
      });
  PrintProbe(r.host_copy, fmt::format("{}host memory copy", kMore),
             [&](const backend::Throughput& t) {
               return fmt::format("{}host memory copy (memcpy, {} threads, 1 GiB) {:.2f} GB/s",
                                  kMore, r.io_threads, t.gbps());
             });
}

void PrintCheck(const Report& r) {
  if (!r.check) return;
  const CheckSummary& c = *r.check;
  if (!c.host_error.empty()) {
    std::printf("  check       FAILED: the host backend stopped: %s\n", c.host_error.c_str());
    return;
  }
  std::printf(
      "  check       %u buffers (%.3f GB) compared with the host backend: %s\n", c.compared,
      c.bytes / 1e9,
      c.mismatches.empty() ? "all equal" : fmt::format("{} differ", c.mismatches.size()).c_str());
  for (const std::string& m : c.mismatches) std::printf("              %s\n", m.c_str());
}

}  // namespace

bool Report::PeakMatches() const {
  return std::all_of(runs.begin(), runs.end(), [&](const Measurement& m) {
    return m.memory.peak_allocated == predicted_peak;
  });
}

// The header, the plan's options and the peak, predicted against measured.
void PrintPlanAndPeak(const Report& r, const Measurement& m) {
  std::printf("loadplan run %s (%s, derive %s): %.3f GB checkpoint from %s\n", r.manifest.c_str(),
              r.mode.c_str(), r.derive ? "on" : "off", r.checkpoint_bytes / 1e9,
              r.checkpoint.c_str());
  std::printf(
      "  plan        lanes %u, prefetch %u, placement %s; %u I/O threads x %.2f MiB chunks%s%s\n",
      r.lanes, r.prefetch, r.placement.c_str(), r.io_threads, r.chunk_bytes / double(1 << 20),
      r.read_bytes != 0
          ? fmt::format(" read {:.2f} MiB at a time", r.read_bytes / double(1 << 20)).c_str()
          : "",
      r.direct ? ", O_DIRECT reads" : "");
  std::printf(
      "  peak        predicted %s = pool %.3f GiB + arena %.3f GiB (lower bound %.3f GiB)\n",
      Bytes(r.predicted_peak).c_str(), GiB(r.resident_rounded), GiB(r.arena_rounded),
      GiB(r.lower_bound));
  std::printf("              measured  %s allocated (%s), cudaMemGetInfo delta %s (%+.1f MiB)\n",
              Bytes(m.memory.peak_allocated).c_str(), r.PeakMatches() ? "equal" : "DIFFERS",
              Bytes(m.memory.peak_used_delta).c_str(), Delta(r, m) / double(1 << 20));
  std::printf("              room: %s free of %s before the load; %s reserved beside it\n",
              Bytes(r.free_before).c_str(), Bytes(r.total).c_str(), Bytes(r.reserve).c_str());
  std::printf("              naive (every source resident) would take %s: %.3fx of this peak\n",
              Bytes(r.naive_peak).c_str(),
              r.predicted_peak ? double(r.naive_peak) / r.predicted_peak : 0.0);
}

void PrintText(const Report& r) {
  const Measurement& m = r.runs[r.median];
  const backend::CudaTimes& t = m.times;
  PrintPlanAndPeak(r, m);
  const double rate = Rate(r.fill_bytes, t.wall_s);
  std::printf(
      "  time        read %.3f s/thread, copy %.3f s/stream, derive %.3f s (GPU), wall %.3f s\n",
      t.read_s, t.copy_s, t.derive_s, t.wall_s);
  std::printf(
      "  waits       %.3f s/thread for a free slot, %.3f s/thread for a job; the plan's thread "
      "%.3f s queueing fills\n",
      t.slot_wait_s, t.job_wait_s, t.submit_s);
  std::printf(
      "  threads     %.3f s/thread before the first chunk, %.3f s after the last, %.3f s "
      "queueing copies\n",
      t.start_s, t.end_s, t.enqueue_s);
  std::printf("  rate        %.2f GB/s end to end (%.3f GB filled in %llu chunks, %u launches)\n",
              rate, r.fill_bytes / 1e9, static_cast<unsigned long long>(t.chunks), t.launches);
  if (t.slices_as_runs + t.slices_as_span + t.slices_as_map > 0) {
    std::printf(
        "  slices      %u read run by run, %u as covering spans, %u out of mapped pages "
        "(--slice-read %s); %.3f GB read from the files in %llu reads\n",
        t.slices_as_runs, t.slices_as_span, t.slices_as_map, r.slice_read.c_str(),
        t.file_bytes / 1e9, static_cast<unsigned long long>(t.reads));
  }
  if (r.runs.size() > 1) {
    std::string walls;
    for (const Measurement& x : r.runs) walls += fmt::format(" {:.3f}", x.times.wall_s);
    std::printf("  runs        wall s:%s (median shown)\n", walls.c_str());
  }
  if (r.stage) {
    const api::StageChoice& c = *r.stage;
    std::printf("  stage       %u of %u of deployment %s, on GPU %d (rank %u of %u%s)\n", c.stage,
                c.stages, c.deployment.c_str(), c.device, c.rank.rank, c.rank.world_size,
                c.rank.launcher.empty() ? ", no launcher" : (", " + c.rank.launcher).c_str());
  }
  const ProcessTimes& p = r.process;
  std::printf(
      "  process     first load called %.3f s after the start (CUDA context %.3f s beside "
      "prepare %.3f s); its call took %.3f s; the last model freed in %.3f s\n",
      p.to_load_s, p.context_s, p.prepare_s, p.first_call_s, p.free_s);
  PrintCeilings(r, rate);
  PrintCheck(r);
  if (!r.saved.empty()) std::printf("  saved       %s\n", r.saved.c_str());
}

// ceilings.<key>: the probe's figure, or its error message (absent when it did not run).
template <typename T, typename Value>
void SetProbe(json& j, const char* key, const std::optional<base::Result<T>>& probe, Value value) {
  if (probe) j["ceilings"][key] = probe->ok() ? value(**probe) : json(probe->status().message());
}

json RunsJson(const Report& r) {
  json runs = json::array();
  for (const Measurement& x : r.runs) {
    runs.push_back({{"wall_s", x.times.wall_s},
                    {"started_unix_s", x.times.started_unix_s},
                    {"read_s", x.times.read_s},
                    {"copy_s", x.times.copy_s},
                    {"slot_wait_s", x.times.slot_wait_s},
                    {"job_wait_s", x.times.job_wait_s},
                    {"submit_s", x.times.submit_s},
                    {"start_s", x.times.start_s},
                    {"end_s", x.times.end_s},
                    {"enqueue_s", x.times.enqueue_s},
                    {"derive_s", x.times.derive_s},
                    {"gbps", Rate(r.fill_bytes, x.times.wall_s)},
                    {"peak_allocated", x.memory.peak_allocated},
                    {"peak_used_delta", x.memory.peak_used_delta},
                    {"chunks", x.times.chunks},
                    {"file_bytes", x.times.file_bytes},
                    {"reads", x.times.reads},
                    {"slices_as_runs", x.times.slices_as_runs},
                    {"slices_as_span", x.times.slices_as_span},
                    {"slices_as_map", x.times.slices_as_map},
                    {"launches", x.times.launches}});
  }
  return runs;
}

// The probes (--ceilings), the host comparison (--check), --save-derived and the stage.
void AddExtras(const Report& r, json& j) {
  const auto gbps = [](const backend::Throughput& t) { return json(t.gbps()); };
  SetProbe(j, "pinned_h2d_gbps", r.h2d, gbps);
  SetProbe(j, "host_read_gbps", r.host_read, gbps);
  SetProbe(j, "pinned_h2d_beside_read_gbps", r.shared, [](const backend::SharedCeilings& c) {
    return c.h2d.bytes > 0 ? json(c.h2d.gbps()) : json(nullptr);  // null: < 3 rounds in the reads
  });
  SetProbe(j, "host_read_beside_h2d_gbps", r.shared,
           [](const backend::SharedCeilings& c) { return json(c.read.gbps()); });
  SetProbe(j, "host_copy_gbps", r.host_copy, gbps);
  if (r.check) {
    j["check"] = {{"ok", r.check->ok()},
                  {"host_error", r.check->host_error},
                  {"compared", r.check->compared},
                  {"bytes", r.check->bytes},
                  {"mismatches", r.check->mismatches}};
  }
  if (!r.saved.empty()) j["saved"] = r.saved;
  if (r.stage) {
    j["stage"] = {{"deployment", r.stage->deployment},
                  {"stage", r.stage->stage},
                  {"stages", r.stage->stages},
                  {"device", r.stage->device},
                  {"rank", r.stage->rank.rank},
                  {"local_rank", r.stage->rank.local_rank},
                  {"world_size", r.stage->rank.world_size},
                  {"launcher", r.stage->rank.launcher}};
  }
}

void PrintJson(const Report& r) {
  const Measurement& m = r.runs[r.median];
  json j = {
      {"manifest", r.manifest},
      {"checkpoint", r.checkpoint},
      {"mode", r.mode},
      {"derive", r.derive},
      {"direct", r.direct},
      {"slice_read", r.slice_read},
      {"lanes", r.lanes},
      {"prefetch", r.prefetch},
      {"placement", r.placement},
      {"io_threads", r.io_threads},
      {"chunk_bytes", r.chunk_bytes},
      {"read_bytes", r.read_bytes},
      {"checkpoint_bytes", r.checkpoint_bytes},
      {"fill_bytes", r.fill_bytes},
      {"derived_bytes", r.derived_bytes},
      {"predicted",
       {{"peak", r.predicted_peak},
        {"pool", r.resident_rounded},
        {"arena", r.arena_rounded},
        {"lower_bound", r.lower_bound},
        {"granularity", r.granularity},
        {"naive_peak", r.naive_peak}}},
      {"device", {{"free_before", r.free_before}, {"total", r.total}, {"reserve", r.reserve}}},
      {"measured",
       {{"peak_allocated", m.memory.peak_allocated},
        {"peak_used_delta", m.memory.peak_used_delta},
        {"baseline_free", m.memory.baseline_free},
        {"total", m.memory.total},
        {"peak_matches", r.PeakMatches()}}},
      {"median_run", r.median},
      {"runs", RunsJson(r)},
      {"process",
       {{"context_s", r.process.context_s},
        {"prepare_s", r.process.prepare_s},
        {"to_load_s", r.process.to_load_s},
        {"first_call_s", r.process.first_call_s},
        {"free_s", r.process.free_s},
        {"start_unix_s", r.process.start_unix_s},
        {"report_unix_s", r.process.report_unix_s}}},
      {"gbps", Rate(r.fill_bytes, m.times.wall_s)}};
  AddExtras(r, j);
  std::printf("%s\n", DumpJson(j).c_str());
}

}  // namespace loadplan::cli::run
