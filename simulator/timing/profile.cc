// Machine profiles: the built-in H200 default, JSON reading (errors with JSON pointers) and
// writing.
#include "simulator/timing/profile.h"

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "base/input_file.h"

namespace loadplan::simulator::timing {
namespace {

constexpr uint64_t kProfileBytes = uint64_t{1} << 20;  // calibrate writes about 2 KB

using base::Status;
using nlohmann::json;

constexpr uint64_t kMaxIoThreads = 4096;

// Reads the fields of one object, remembering what it took: Done() names any key left over.
class Fields {
 public:
  Fields(const json& j, std::string ptr) : j_(j), ptr_(std::move(ptr)) {}
  std::string Ptr(std::string_view key) const { return ptr_ + "/" + std::string(key); }
  const json* Get(std::string_view key, bool required) {
    taken_.insert(std::string(key));
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) Fail(fmt::format("{}: missing", Ptr(key)));
      return nullptr;
    }
    return &*it;
  }
  void Number(std::string_view key, double& out, bool positive, bool required = true) {
    const json* v = Get(key, required);
    if (v == nullptr) return;
    if (!v->is_number() || (positive ? v->get<double>() <= 0 : v->get<double>() < 0)) {
      Fail(fmt::format("{}: expected a number {} 0", Ptr(key), positive ? ">" : ">="));
      return;
    }
    out = v->get<double>();
  }
  void Unsigned(std::string_view key, uint64_t& out, bool positive) {
    const json* v = Get(key, true);
    if (v == nullptr) return;
    if (!v->is_number_unsigned() || (positive && v->get<uint64_t>() == 0)) {
      Fail(fmt::format("{}: expected an integer {} 0", Ptr(key), positive ? ">" : ">="));
      return;
    }
    out = v->get<uint64_t>();
  }
  void String(std::string_view key, std::string& out, bool required) {
    const json* v = Get(key, required);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(fmt::format("{}: expected a string", Ptr(key)));
    out = v->get<std::string>();
  }
  // A nested object's reader (nullopt and an error when it is not an object).
  std::optional<Fields> Object(std::string_view key) {
    const json* v = Get(key, true);
    if (v == nullptr) return std::nullopt;
    if (!v->is_object()) {
      Fail(fmt::format("{}: expected an object", Ptr(key)));
      return std::nullopt;
    }
    return Fields(*v, Ptr(key));
  }
  Status Done() {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!taken_.count(it.key())) Fail(fmt::format("{}: unknown key", Ptr(it.key())));
    }
    return error_.empty() ? Status::Ok() : Status::Error(error_);
  }
  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  const json& value() const { return j_; }

 private:
  const json& j_;
  std::string ptr_;
  std::set<std::string, std::less<>> taken_;
  std::string error_;
};

// The first error of a nested reader becomes the parent's.
void Merge(Fields& parent, std::optional<Fields>& child) {
  if (!child) return;
  if (Status st = child->Done(); !st.ok()) parent.Fail(st.message());
}

// nlohmann keeps the last of duplicate keys silently: a parse callback catches them.
struct DuplicateFinder {
  struct Frame {
    std::set<std::string> keys;
    std::string ptr, last_key;
    bool array = false;
  };
  std::vector<Frame> frames;
  std::string error;
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      std::string ptr;
      if (!frames.empty())
        ptr = frames.back().ptr + "/" + (frames.back().array ? "-" : frames.back().last_key);
      frames.push_back({.ptr = ptr, .array = event == E::array_start});
    } else if (event == E::key && !frames.empty()) {
      Frame& f = frames.back();
      f.last_key = parsed.get<std::string>();
      if (!f.keys.insert(f.last_key).second && error.empty())
        error = fmt::format("{}/{}: duplicate key", f.ptr, f.last_key);
    } else if ((event == E::object_end || event == E::array_end) && !frames.empty()) {
      frames.pop_back();
    }
    return true;
  }
};

}  // namespace

MachineProfile DefaultH200Profile() {
  // `loadplan calibrate` on the lent H200, 2026-12-02T09:25:57Z (examples/profiles/h200.json,
  // docs/performance.md), to 4 significant figures.
  MachineProfile p{
      .device = "NVIDIA H200",
      .measured = "2026-12-02T09:25:57Z on the lent H200 (examples/profiles/h200.json)",
      .source = "built-in default (docs/performance.md, not this machine)",
      .builtin = true,
      .pinned_h2d = 55.46e9,
      .page_cache_read = 80.69e9,
      .direct_read = 1.516e9,
      .pipeline_hot = 50.90e9,
      .pipeline_cold = 1.498e9,
      .per_fill_s = 56.14e-6,
      .default_kernel_rate = 2.440e12,
      .launch_overhead_s = 5.867e-6,
      .context_start_s = 0.3469,
      .context_device_bytes = 552402944,
      .setup_s = 0.04715,
      .alloc_s = 8.807e-5};
  p.kernels = {{"cast_bf16_f32", 3.837e12},      {"copy", 4.014e12},
               {"fp8_block_bf16", 1.789e12},     {"mxfp4_dequant", 2.068e12},
               {"mxfp4_experts_bf16", 2.718e12}, {"mxfp4_fc1_bias", 0.4238e12},
               {"mxfp4_fc1_scales", 2.440e12},   {"mxfp4_fc1_weight", 3.464e12},
               {"mxfp4_fc2_bias", 0.2338e12},    {"mxfp4_fc2_scales", 2.089e12},
               {"mxfp4_fc2_weight", 3.421e12}};
  return p;
}

namespace {

// schema, version, device, measured, source, builtin.
void ReadHeader(Fields& top, MachineProfile& p) {
  std::string schema;
  top.String("schema", schema, true);
  if (!schema.empty() && schema != kProfileSchema)
    top.Fail(fmt::format("/schema: \"{}\", expected \"{}\"", schema, kProfileSchema));
  if (const json* v = top.Get("version", true); v != nullptr) {
    if (!v->is_number_integer() || v->get<int64_t>() != kProfileVersion)
      top.Fail(
          fmt::format("/version: {}, this loadplan reads version {}", v->dump(), kProfileVersion));
  }
  top.String("device", p.device, false);
  top.String("measured", p.measured, false);
  top.String("source", p.source, false);
  if (const json* v = top.Get("builtin", false); v != nullptr) {
    if (!v->is_boolean())
      top.Fail("/builtin: expected true or false");
    else
      p.builtin = v->get<bool>();
  }
}

void ReadIo(Fields& top, MachineProfile& p) {
  std::optional<Fields> io = top.Object("io");
  if (io) {
    uint64_t threads = 0;
    io->Unsigned("threads", threads, true);
    if (threads > kMaxIoThreads)
      io->Fail(
          fmt::format("{}: {} threads, more than {}", io->Ptr("threads"), threads, kMaxIoThreads));
    p.io_threads = static_cast<uint32_t>(std::min<uint64_t>(threads, kMaxIoThreads));
    io->Unsigned("chunk_bytes", p.chunk_bytes, true);
  }
  Merge(top, io);
}

void ReadRates(Fields& top, MachineProfile& p) {
  std::optional<Fields> rates = top.Object("rates");
  if (rates) {
    rates->Number("pinned_h2d", p.pinned_h2d, true);
    rates->Number("page_cache_read", p.page_cache_read, true);
    rates->Number("direct_read", p.direct_read, true);
    rates->Number("pipeline_hot", p.pipeline_hot, true);
    rates->Number("pipeline_cold", p.pipeline_cold, true);
    rates->Number("per_fill_s", p.per_fill_s, false);
    rates->Number("per_run_s", p.per_run_s, true, /*required=*/false);
    rates->Number("per_page_s", p.per_page_s, true, /*required=*/false);
    rates->Number("per_map_run_s", p.per_map_run_s, true, /*required=*/false);
  }
  Merge(top, rates);
}

void ReadKernels(Fields& top, MachineProfile& p) {
  std::optional<Fields> k = top.Object("kernels");
  if (k) {
    k->Number("default_rate", p.default_kernel_rate, true);
    k->Number("launch_overhead_s", p.launch_overhead_s, false);
    if (std::optional<Fields> r = k->Object("rates")) {
      for (auto it = r->value().begin(); it != r->value().end(); ++it) {
        double rate = 0;
        r->Number(it.key(), rate, true);
        p.kernels[it.key()] = rate;
      }
      Merge(*k, r);
    }
  }
  Merge(top, k);
}

void ReadContext(Fields& top, MachineProfile& p) {
  std::optional<Fields> c = top.Object("context");
  if (c) {
    c->Number("start_s", p.context_start_s, false);
    c->Unsigned("device_bytes", p.context_device_bytes, false);
    c->Number("setup_s", p.setup_s, false);
    c->Number("alloc_s", p.alloc_s, false);
  }
  Merge(top, c);
}

}  // namespace

base::Result<MachineProfile> ParseProfile(std::string_view text) {
  DuplicateFinder dup;
  json j = json::parse(text.begin(), text.end(), std::ref(dup), /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Error("not JSON (or not a whole JSON document)");
  if (!dup.error.empty()) return Status::Error(dup.error);
  if (!j.is_object()) return Status::Error(": expected an object (the profile)");
  MachineProfile p;
  Fields top(j, "");
  ReadHeader(top, p);
  ReadIo(top, p);
  ReadRates(top, p);
  ReadKernels(top, p);
  ReadContext(top, p);
  if (Status st = top.Done(); !st.ok()) return st;
  return p;
}

base::Result<MachineProfile> ReadProfileFile(const std::string& path) {
  base::Result<std::string> text = base::ReadInputFile(path, kProfileBytes, "machine profile");
  if (!text.ok()) return text.status();
  base::Result<MachineProfile> p = ParseProfile(*text);
  if (!p.ok()) return Status::Error(fmt::format("{}: {}", path, p.status().message()));
  return p;
}

json ProfileJson(const MachineProfile& p) {
  json kernels = json::object();
  for (const auto& [name, rate] : p.kernels) kernels[name] = rate;
  json j = {{"schema", kProfileSchema},
            {"version", kProfileVersion},
            {"device", p.device},
            {"measured", p.measured},
            {"source", p.source},
            {"builtin", p.builtin},
            {"io", {{"threads", p.io_threads}, {"chunk_bytes", p.chunk_bytes}}},
            {"rates",
             {{"pinned_h2d", p.pinned_h2d},
              {"page_cache_read", p.page_cache_read},
              {"direct_read", p.direct_read},
              {"pipeline_hot", p.pipeline_hot},
              {"pipeline_cold", p.pipeline_cold},
              {"per_fill_s", p.per_fill_s}}},
            {"kernels",
             {{"rates", kernels},
              {"default_rate", p.default_kernel_rate},
              {"launch_overhead_s", p.launch_overhead_s}}},
            {"context",
             {{"start_s", p.context_start_s},
              {"device_bytes", p.context_device_bytes},
              {"setup_s", p.setup_s},
              {"alloc_s", p.alloc_s}}}};
  if (p.per_run_s > 0) j["rates"]["per_run_s"] = p.per_run_s;  // absent: not measured
  if (p.per_page_s > 0) j["rates"]["per_page_s"] = p.per_page_s;
  if (p.per_map_run_s > 0) j["rates"]["per_map_run_s"] = p.per_map_run_s;
  return j;
}

double PerRunSeconds(const MachineProfile& p) {
  return p.per_run_s > 0 ? p.per_run_s : kDefaultPerRunSeconds;
}

double PerPageSeconds(const MachineProfile& p) {
  return p.per_page_s > 0 ? p.per_page_s : kDefaultPerPageSeconds;
}

double PerMapRunSeconds(const MachineProfile& p) {
  return p.per_map_run_s > 0 ? p.per_map_run_s : kDefaultPerMapRunSeconds;
}

SliceReadCosts SliceCostsOf(const MachineProfile& p, bool direct_io) {
  return {.per_run_s = PerRunSeconds(p),
          .read_rate = direct_io ? p.direct_read : p.page_cache_read,
          .per_page_s = direct_io ? 0 : PerPageSeconds(p),
          .per_map_run_s = PerMapRunSeconds(p),
          .threads = p.io_threads};
}

double KernelRate(const MachineProfile& p, std::string_view name, bool* measured) {
  auto it = p.kernels.find(std::string(name));
  if (measured != nullptr) *measured = it != p.kernels.end();
  return it != p.kernels.end() ? it->second : p.default_kernel_rate;
}

}  // namespace loadplan::simulator::timing
