// The load-time model of predict.h: one pass over the plan's steps.
#include "simulator/timing/predict.h"

#include <algorithm>

#include <fmt/format.h>

#include "simulator/timing/slice_read.h"

namespace loadplan::simulator::timing {
namespace {

struct Clock {
  double stream = 0;   // when the byte stream is free (last chunk copied)
  double compute = 0;  // when the compute stream is free
  double host = 0;     // earliest a fill may start (after a FreeArena drain)
  std::vector<double> done;
  double WaitsDone(const Step& s) const {
    double t = 0;
    for (StepIndex w : s.waits)
      if (Index(w) < done.size()) t = std::max(t, done[Index(w)]);
    return t;
  }
};

uint64_t CallBytes(const PlannedCall& c) {
  uint64_t b = 0;
  for (const PlannedArg& a : c.args) b += a.bytes.value_or(0);
  return b;
}

}  // namespace

std::string_view CacheName(Cache c) { return c == Cache::kHot ? "hot" : "cold"; }

namespace {

// The profile's figures for one cache state.
struct Rates {
  double rate = 0;       // the pipeline, bulk
  double read_rate = 0;  // the reads alone
  double threads = 1;
  uint64_t chunk = 1;
  double slots = 0;  // read-ahead bytes: 2 slots a thread
  bool hot = true;   // the checkpoint in the page cache
};

Rates RatesOf(const MachineProfile& profile, bool hot) {
  Rates r{.rate = hot ? profile.pipeline_hot : profile.pipeline_cold,
          .read_rate = hot ? profile.page_cache_read : profile.direct_read,
          .threads = static_cast<double>(std::max<uint32_t>(profile.io_threads, 1)),
          .chunk = std::max<uint64_t>(profile.chunk_bytes, 1)};
  r.slots = 2 * r.threads * static_cast<double>(r.chunk);
  r.hot = hot;
  return r;
}

// A strided slice's read (runs under a chunk), chosen as the load's --slice-read auto chooses
// (slice_read.h: the page cache's read rate, the profile's per-run, per-page and per-map-run
// costs, its I/O threads): its covering span, the bytes between its runs at the read rate; a
// map of the span's pages and its runs (from an evicted file, also the pages' bytes beyond the
// runs at the read rate); or a pread per run, spread over the threads. A slice the plan cannot
// weigh (no extent) is read by runs, as the load reads it. Returns the stream time it adds beyond
// its bytes.
double PredictSliceRead(const PlannedBuffer& b, uint64_t runs, const MachineProfile& profile,
                        const Rates& r, LoadTimePrediction& out) {
  const std::optional<base::SliceRuns> planned = PlannedSliceRuns(b);
  const SliceReadCosts costs = SliceCostsOf(profile);
  const SliceRead how = planned ? ChooseSliceRead(*planned, costs) : SliceRead::kRuns;
  if (how == SliceRead::kSpan && r.read_rate > 0) {
    const uint64_t gap = planned->span() - planned->bytes();
    const double gap_s = static_cast<double>(gap) / r.read_rate;
    ++out.slices_by_span;
    out.read_bytes += gap;
    out.slice_span_s += gap_s;
    return gap_s;
  }
  if (how == SliceRead::kMap) {
    // From an evicted file the span's pages come from the disk, gaps and all.
    const uint64_t pages = SpanPages(*planned);
    const uint64_t gap =
        r.hot ? 0 : std::max(pages * kPageBytes, planned->bytes()) - planned->bytes();
    const double map_s = SliceReadSeconds(how, *planned, costs) +
                         (gap > 0 && r.read_rate > 0 ? static_cast<double>(gap) / r.read_rate : 0);
    ++out.slices_by_map;
    out.slice_map_pages += pages;
    out.slice_map_runs += planned->count;
    out.slice_map_s += map_s;
    out.read_bytes += gap;
    return map_s;
  }
  const double preads_s = static_cast<double>(runs) * costs.per_run_s / r.threads;
  ++(planned ? out.slices_by_runs : out.slices_unweighed);
  out.slice_runs += runs;
  out.slice_runs_s += preads_s;
  return preads_s;
}

// A fill on the I/O stream: after its gate (the host, its waits), the bytes read ahead while
// the stream waited at the copy rate, the rest at the pipeline rate. A small fill costs its
// fixed overhead; a large one hides it behind other chunks. A slice's runs under a chunk are
// packed into chunks, a pread each, spread over the threads (the CUDA backend's runs path:
// slice_read.h); runs of a chunk or more are requests of their own.
void PredictFill(const LoadPlan& plan, const Step& s, const MachineProfile& profile, const Rates& r,
                 Clock& c, double& done, LoadTimePrediction& out) {
  if (!s.buffer || Index(*s.buffer) >= plan.buffers.size()) return;
  const uint64_t bytes = plan.buffer(*s.buffer).bytes;
  const double gate = std::max(c.host, c.WaitsDone(s));
  double fast = 0;  // bytes read ahead while the stream waited
  if (gate > c.stream) {
    out.stall_s += gate - c.stream;
    ++out.stalls;
    fast = std::min({static_cast<double>(bytes), r.slots, (gate - c.stream) * r.read_rate});
    c.stream = gate;
  }
  const uint64_t chunks = (bytes + r.chunk - 1) / r.chunk;
  double t = 0;
  if (profile.pinned_h2d > 0) t += fast / profile.pinned_h2d;
  if (r.rate > 0) t += (static_cast<double>(bytes) - fast) / r.rate;
  const uint64_t runs = FillRuns(plan.buffer(*s.buffer));
  uint64_t requests = 1;
  if (runs > 1 && bytes / runs < r.chunk) {
    t += PredictSliceRead(plan.buffer(*s.buffer), runs, profile, r, out);
  } else {
    requests = runs;
  }
  c.stream += std::max(t, static_cast<double>(requests) * profile.per_fill_s);
  done = c.stream;
  out.fill_bytes += bytes;
  out.read_bytes += bytes;
  out.chunks += std::max(chunks, requests);
  out.fills += static_cast<uint32_t>(std::min<uint64_t>(requests, UINT32_MAX));
}

// A derive launch on the compute stream, after its waits: the launch overhead plus its bytes
// at the kernel's measured rate (a kernel the profile does not list is named).
void PredictLaunch(const LoadPlan& plan, const Step& s, const MachineProfile& profile,
                   const PredictOptions& options, Clock& c, double& done, LoadTimePrediction& out) {
  if (!s.call || Index(*s.call) >= plan.calls.size()) return;
  const PlannedCall& call = plan.call(*s.call);
  double t = profile.launch_overhead_s;
  if (options.derive) {
    bool measured = true;
    const double k = KernelRate(profile, call.kernel, &measured);
    if (!measured && std::find(out.unmeasured_kernels.begin(), out.unmeasured_kernels.end(),
                               call.kernel) == out.unmeasured_kernels.end())
      out.unmeasured_kernels.push_back(call.kernel);
    if (k > 0) t += static_cast<double>(CallBytes(call)) / k;
  }
  const double start = std::max(c.compute, c.WaitsDone(s));
  c.compute = start + t;
  done = c.compute;
  out.derive_s += t;
  ++out.launches;
}

}  // namespace

LoadTimePrediction PredictLoad(const LoadPlan& plan, const MachineProfile& profile,
                               const PredictOptions& options) {
  LoadTimePrediction out{.cache = options.cache};
  const Rates r = RatesOf(profile, options.cache == Cache::kHot);
  out.rate = r.rate;
  Clock c{.done = std::vector<double>(plan.steps.size(), 0)};
  // The first chunk of each thread is read before anything is copied.
  c.stream =
      r.rate > 0 && r.read_rate > 0 ? static_cast<double>(r.chunk) * r.threads / r.read_rate : 0;
  uint32_t allocations = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    double& done = c.done[i];
    switch (s.kind) {
      case StepKind::kAllocResident:
      case StepKind::kAllocArena: ++allocations; break;
      case StepKind::kFill: PredictFill(plan, s, profile, r, c, done, out); break;
      case StepKind::kLaunch: PredictLaunch(plan, s, profile, options, c, done, out); break;
      case StepKind::kRelease: done = c.WaitsDone(s); break;
      case StepKind::kFreeArena:
        // The host drains the pool and the compute stream before it frees the arena.
        c.host = std::max({c.stream, c.compute, c.WaitsDone(s)});
        done = c.host;
        break;
    }
  }
  std::sort(out.unmeasured_kernels.begin(), out.unmeasured_kernels.end());
  out.wall_s = out.fills + out.launches == 0 ? 0 : std::max(c.stream, c.compute);
  out.tail_s = std::max(0.0, c.compute - c.stream);
  if (r.read_rate > 0) out.read_s = out.fill_bytes / r.read_rate;
  if (profile.pinned_h2d > 0) out.copy_s = out.fill_bytes / profile.pinned_h2d;
  out.setup_s = profile.context_start_s + profile.setup_s + allocations * profile.alloc_s;
  out.total_s = out.setup_s + out.wall_s;
  return out;
}

nlohmann::json PredictionJson(const LoadTimePrediction& p, const MachineProfile& profile) {
  return {{"cache", CacheName(p.cache)},
          {"profile",
           {{"device", profile.device},
            {"measured", profile.measured},
            {"source", profile.source},
            {"builtin", profile.builtin}}},
          {"wall_s", p.wall_s},
          {"total_s", p.total_s},
          {"phases",
           {{"setup_s", p.setup_s},
            {"read_s", p.read_s},
            {"copy_s", p.copy_s},
            {"derive_s", p.derive_s},
            {"stall_s", p.stall_s},
            {"tail_s", p.tail_s}}},
          {"rate", p.rate},
          {"gbps", p.wall_s > 0 ? p.fill_bytes / p.wall_s / 1e9 : 0.0},
          {"fill_bytes", p.fill_bytes},
          {"chunks", p.chunks},
          {"fills", p.fills},
          {"launches", p.launches},
          {"stalls", p.stalls},
          {"read_bytes", p.read_bytes},
          {"slice_runs", p.slice_runs},
          {"slice_runs_s", p.slice_runs_s},
          {"slices",
           {{"by_runs", p.slices_by_runs},
            {"by_span", p.slices_by_span},
            {"by_map", p.slices_by_map},
            {"unweighed", p.slices_unweighed},
            {"span_s", p.slice_span_s},
            {"map_pages", p.slice_map_pages},
            {"map_runs", p.slice_map_runs},
            {"map_s", p.slice_map_s}}},
          {"unmeasured_kernels", p.unmeasured_kernels}};
}

namespace {

// "slices: ..." when the load reads strided slices: how many by runs, by span and by map, what
// each costs, and the bytes read beside the bytes filled.
std::string SlicesText(const LoadTimePrediction& p, const MachineProfile& profile) {
  if (p.strided_slices() == 0) return "";
  std::string s = fmt::format(
      "  slices: {} strided; {} by runs ({} runs a pread each, {:.3f} s of the stream at {:.2f} "
      "us a run{} over {} threads), {} by span ({:.2f} GB between their runs, {:.3f} s); reads "
      "{:.2f} GB for {:.2f} GB filled ({:.3f}x)\n",
      p.strided_slices(), p.slices_read_by_runs(), p.slice_runs, p.slice_runs_s,
      PerRunSeconds(profile) * 1e6, profile.per_run_s > 0 ? ", the profile's" : ", the default",
      profile.io_threads, p.slices_by_span, static_cast<double>(p.read_bytes - p.fill_bytes) / 1e9,
      p.slice_span_s, p.read_bytes / 1e9, p.fill_bytes / 1e9,
      p.fill_bytes > 0 ? static_cast<double>(p.read_bytes) / static_cast<double>(p.fill_bytes)
                       : 1.0);
  if (p.slices_by_map > 0) {
    const auto whose = [](double figure) { return figure > 0 ? "the profile's" : "the default"; };
    const double per_run = PerMapRunSeconds(profile);
    const std::string runs = per_run > 0 ? fmt::format(", and its runs at {:.4f} us a run, {}",
                                                       per_run * 1e6, whose(profile.per_map_run_s))
                                         : "";
    s += fmt::format(
        "  map (the span's pages at {:.3f} us a page, {}{}, over {} threads): {} slices, {} "
        "pages, {} runs, {:.3f} s of the stream\n",
        PerPageSeconds(profile) * 1e6, whose(profile.per_page_s), runs, profile.io_threads,
        p.slices_by_map, p.slice_map_pages, p.slice_map_runs, p.slice_map_s);
  }
  if (p.slices_unweighed > 0) {
    s += fmt::format(
        "  {} of them without the tensor's extent (the manifest's slice has no \"extent\"): "
        "read by runs, their span not weighed\n",
        p.slices_unweighed);
  }
  return s;
}

}  // namespace

std::string PredictionText(const LoadTimePrediction& p, const MachineProfile& profile) {
  std::string s = fmt::format(
      "Load time ({} page cache, profile: {}{}):\n"
      "  wall {:.3f} s for {:.2f} GB ({:.2f} GB/s), plus setup {:.3f} s = {:.3f} s\n"
      "  read {:.3f} s and copy {:.3f} s overlapped at {:.2f} GB/s; derive {:.3f} s in {} "
      "launches ({:.3f} s after the last copy); {:.3f} s stalled in {} waits\n",
      CacheName(p.cache), profile.device.empty() ? "?" : profile.device,
      profile.builtin ? ", built-in default from docs/performance.md" : ", " + profile.measured,
      p.wall_s, p.fill_bytes / 1e9, p.wall_s > 0 ? p.fill_bytes / p.wall_s / 1e9 : 0.0, p.setup_s,
      p.total_s, p.read_s, p.copy_s, p.rate / 1e9, p.derive_s, p.launches, p.tail_s, p.stall_s,
      p.stalls);
  s += SlicesText(p, profile);
  if (!p.unmeasured_kernels.empty()) {
    std::string names;
    for (const std::string& k : p.unmeasured_kernels) names += (names.empty() ? "" : ", ") + k;
    s += fmt::format("  not in the profile (timed at {:.0f} GB/s): {}\n",
                     profile.default_kernel_rate / 1e9, names);
  }
  return s;
}

}  // namespace loadplan::simulator::timing
