// load(): verify, plan and load a checkpoint onto a GPU without holding the GIL. The load runs
// on a worker thread; the calling thread waits in 50 ms slices, and between slices (GIL held)
// checks for signals (Ctrl-C requests stop through a std::stop_source, and the cancelled load
// frees what it allocated before we return) and reports progress to the Python callback.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "api/launch.h"
#include "api/loadplan.h"
#include "simulator/timing/profile.h"
#include "python/src/bindings.h"
#include "python/src/model.h"

namespace loadplan::python {
namespace {

using namespace std::chrono_literals;

struct LoadArgs {
  verifier::VerifiedManifest manifest;
  std::string checkpoint;
  api::LoadOptions options;
};

base::Result<api::LoadedModel> Run(const LoadArgs& a) {
  return api::Load(a.manifest, a.checkpoint, a.options);
}

// The manifest verified once, here (without the GIL). With errors, the ManifestError carries
// this verification's diagnostics (loadplan._check.raise_manifest_error: no second pass).
verifier::VerifiedManifest VerifiedOrRaise(const std::string& text, const nb::object& source) {
  verifier::CheckOutput in;
  {
    nb::gil_scoped_release nogil;
    in = api::CheckText(text);
  }
  if (in.result.verified) return *in.result.verified;
  nb::module_ check = nb::module_::import_("loadplan._check");
  const std::string file = nb::cast<std::string>(check.attr("display_name")(source));
  check.attr("raise_manifest_error")(DiagnosticTuples(in.result.diags, file), file);
  RaiseStatus(base::Status::Error("the manifest has errors but no error diagnostic",
                                  base::ErrorKind::kInternal),
              "load");
}

// What the worker shares with the waiting thread.
struct Shared {
  std::stop_source stop;
  std::atomic<uint64_t> done{0}, total{0};
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::optional<base::Result<api::LoadedModel>> result;
};

// Joins the worker whatever way the caller leaves (a signal, a raising progress callback):
// the load is asked to stop first, and the GIL is released while waiting for it.
struct Joiner {
  std::thread& worker;
  Shared& s;
  ~Joiner() {
    if (!worker.joinable()) return;
    s.stop.request_stop();
    nb::gil_scoped_release nogil;
    worker.join();
  }
};

void Work(const LoadArgs& a, Shared& s) {
  std::optional<base::Result<api::LoadedModel>> r;
  try {
    r.emplace(Run(a));
  } catch (const std::exception& e) {
    r.emplace(base::Status::Error(e.what(), base::ErrorKind::kInternal));
  } catch (...) {
    r.emplace(base::Status::Error("unknown exception in the load", base::ErrorKind::kInternal));
  }
  std::lock_guard lock(s.mu);
  s.result = std::move(r);
  s.finished = true;
  s.cv.notify_all();
}

// Waits for the worker; a signal handler that raised (Ctrl-C) or a raising progress callback
// propagates, and the caller's Joiner stops the load.
void Wait(Shared& s, const nb::object& progress) {
  uint64_t shown = 0;  // progress is reported once bytes move
  for (;;) {
    bool finished;
    {
      nb::gil_scoped_release nogil;
      std::unique_lock lock(s.mu);
      finished = s.cv.wait_for(lock, 50ms, [&] { return s.finished; });
    }
    if (PyErr_CheckSignals() != 0) throw nb::python_error();  // KeyboardInterrupt, usually
    const uint64_t done = s.done.load();
    if (!progress.is_none() && done != shown) {
      shown = done;
      progress(done, s.total.load());
    }
    if (finished) return;
  }
}

// A Python int for an unsigned option: negative is an OptionError (nanobind's own conversion
// would raise a TypeError showing the binding's signature).
uint64_t Unsigned(int64_t v, const char* name, const char* flag) {
  if (v < 0)
    RaiseStatus(base::Status::Error(fmt::format("{} ({}) {} is negative", name, flag, v),
                                    base::ErrorKind::kOption),
                "options");
  return static_cast<uint64_t>(v);
}

// The machine's figures (api::ApplyMachine, as `loadplan run --machine`) and the slice read.
void ApplyMachineOptions(const std::optional<std::string>& machine,
                         std::optional<int64_t> io_threads, std::optional<int64_t> chunk_bytes,
                         const std::string& slice_read, api::LoadOptions& o) {
  std::optional<simulator::timing::MachineProfile> profile;
  if (machine) {
    base::Result<simulator::timing::MachineProfile> p = api::ReadMachineOption(*machine);
    if (!p.ok()) RaiseStatus(p.status(), "options");  // the CLI's words (exit 2 there)
    profile = std::move(*p);
  }
  std::optional<uint32_t> threads;
  if (io_threads) {
    const uint64_t t = Unsigned(*io_threads, "io_threads", "--io-threads");
    threads = static_cast<uint32_t>(std::min<uint64_t>(t, UINT32_MAX));
  }
  std::optional<uint64_t> chunk;
  if (chunk_bytes) chunk = Unsigned(*chunk_bytes, "chunk_bytes", "--chunk-mib");
  api::ApplyMachine(profile ? &*profile : nullptr, threads, chunk, o);
  const std::optional<simulator::timing::SliceRead> read =
      simulator::timing::SliceReadOf(slice_read);
  if (!read) {
    RaiseStatus(base::Status::Error(fmt::format("slice_read (--slice-read) '{}' is not one of: "
                                                "auto, runs, span, map",
                                                slice_read),
                                    base::ErrorKind::kOption),
                "options");
  }
  o.slice_read = *read;
}

nb::object Load(nb::object source, std::string text, std::string checkpoint, int device,
                std::optional<int64_t> io_threads, std::optional<int64_t> chunk_bytes,
                std::optional<std::string> machine, std::optional<int64_t> memory_limit,
                int64_t reserve, bool naive, bool derive, bool direct_io,
                const std::string& slice_read, std::optional<int64_t> lanes,
                std::optional<int64_t> prefetch, const std::string& placement,
                nb::object progress) {
  base::Result<simulator::PlanOptions> plan = PlanOptionsOf(lanes, prefetch, placement, naive);
  if (!plan.ok()) RaiseStatus(plan.status(), "options");
  std::optional<uint64_t> limit;
  if (memory_limit) limit = Unsigned(*memory_limit, "memory_limit", "--memory-limit");
  Shared s;
  LoadArgs a{.manifest = VerifiedOrRaise(text, source),
             .checkpoint = std::move(checkpoint),
             .options = {.device = device,
                         .memory_limit = limit,
                         .reserve = Unsigned(reserve, "reserve", "--reserve"),
                         .naive = naive,
                         .derive = derive,
                         .direct_io = direct_io,
                         .plan = *plan,
                         .stop = s.stop.get_token()}};
  ApplyMachineOptions(machine, io_threads, chunk_bytes, slice_read, a.options);
  a.options.progress = [&s](uint64_t done, uint64_t total) {  // loader thread: atomics only
    s.total = total;
    s.done = done;
  };
  std::thread worker;
  {
    nb::gil_scoped_release nogil;
    worker = std::thread([&] { Work(a, s); });
  }
  {
    Joiner join{worker, s};
    Wait(s, progress);
    nb::gil_scoped_release nogil;
    worker.join();
  }
  if (!s.result->ok()) RaiseStatus(s.result->status(), "load");
  return nb::cast(PyModel{std::move(**s.result)}, nb::rv_policy::move);
}

// What a load of `path` reads (api::ResolveSource, as `loadplan run`): {"manifest", "folder",
// "device", "stage"}; "stage" is None, or {"stage", "stages", "deployment", "manifest",
// "device", "rank", "local_rank", "world_size", "launcher"} for a deployment file's stage.
nb::dict ResolveSource(const std::string& path, std::optional<int64_t> rank, int device) {
  std::optional<uint32_t> r;
  if (rank)
    r = static_cast<uint32_t>(std::min<uint64_t>(Unsigned(*rank, "rank", "rank="), UINT32_MAX));
  const base::Result<api::LoadSource> s = api::ResolveSource(path, r, device);
  if (!s.ok()) RaiseStatus(s.status(), "stage");
  nb::dict d;
  d["manifest"] = s->manifest;
  d["text"] = s->text;  // a manifest's text, read once (empty: read it)
  d["folder"] = s->folder;
  d["device"] = s->device;
  d["stage"] = nb::none();
  if (const std::optional<api::StageChoice>& c = s->stage) {
    nb::dict st;
    st["manifest"] = c->manifest;
    st["device"] = c->device;
    st["stage"] = c->stage;
    st["stages"] = c->stages;
    st["deployment"] = c->deployment;
    st["rank"] = c->rank.rank;
    st["local_rank"] = c->rank.local_rank;
    st["world_size"] = c->rank.world_size;
    st["launcher"] = c->rank.launcher;
    d["stage"] = st;
  }
  return d;
}

}  // namespace

void BindLoad(nb::module_& m) {
  m.attr("DEFAULT_IO_THREADS") = backend::kDefaultIoThreads;  // backend/load_defaults.h
  m.attr("DEFAULT_CHUNK_BYTES") = backend::kDefaultChunkBytes;
  m.def("resolve_source", &ResolveSource, nb::arg("path"), nb::arg("rank").none() = nb::none(),
        nb::arg("device") = 0,
        "What a load of PATH reads (api::ResolveSource): a model folder, a deployment file's stage "
        "(rank=, else the launcher's environment), or the manifest itself.");
  m.def("load", &Load, nb::arg("source"), nb::arg("text"), nb::arg("checkpoint"), nb::arg("device"),
        nb::arg("io_threads").none(), nb::arg("chunk_bytes").none(), nb::arg("machine").none(),
        nb::arg("memory_limit").none(), nb::arg("reserve"), nb::arg("naive"), nb::arg("derive"),
        nb::arg("direct_io"), nb::arg("slice_read"), nb::arg("lanes").none(),
        nb::arg("prefetch").none(), nb::arg("placement"), nb::arg("progress").none(),
        "Loads a checkpoint for verified manifest text onto a GPU; returns a Model. The GIL is "
        "released during the load; Ctrl-C cancels it.");
}

}  // namespace loadplan::python
