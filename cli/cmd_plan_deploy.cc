// `loadplan plan DEPLOY.json`: verify and plan every stage of a deployment, check the
// boundaries between consecutive stages, print one row per GPU (docs/deploy.md).
#include "cli/cmd_plan_deploy.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "cli/colour.h"
#include "cli/json_out.h"
#include "simulator/deploy/deployment.h"
#include "simulator/plan_totals.h"
#include "verifier/diag.h"
#include "verifier/manifest_file.h"

namespace loadplan::cli {
namespace {

using nlohmann::json;
using simulator::Deployment;
using simulator::DeploymentStage;
using verifier::Diagnostic;

struct Stage {
  CheckedInput in;
  std::string label;  // "stage 3 (dir/k3-stage.json)"
  std::optional<PlanReport> report;
};

// Diagnostics of `file`: text on stderr, or collected for one JSON array on stdout.
void Report(const std::vector<Diagnostic>& diags, const std::string& file, Format format,
            json& collected) {
  if (diags.empty()) return;
  if (format == Format::kJson) {
    for (json& d : json::parse(verifier::FormatJson(diags, file))) collected.push_back(d);
    return;
  }
  PrintDiagnostics(verifier::FormatText(diags, file), stderr);
}

int RejectOptions(const PlanCliOptions& o) {
  std::string bad;
  if (!o.svg.empty()) bad = "--svg";
  if (o.fit) bad = "--fit";
  if (o.device_memory && (*o.device_memory == "free" || *o.device_memory == "FREE"))
    bad = "--device-memory free";
  if (bad.empty()) return 0;
  std::fprintf(stderr, "loadplan plan: %s %s: not taken with a deployment (docs/deploy.md)\n",
               bad.c_str(), o.file.c_str());
  return 2;
}

// "stage 2", "rank 5", or in a grid of pipeline stages of tensor-parallel ranks "stage 1 rank 0".
std::string StageLabel(const Deployment& d, size_t k, const std::string& path) {
  const auto t = static_cast<size_t>(d.tensor_parallel);
  if (t <= 1) return fmt::format("stage {} ({})", k, path);
  if (d.stages.size() == t) return fmt::format("rank {} ({})", k, path);
  return fmt::format("stage {} rank {} ({})", k / t, k % t, path);
}

// A pointer into a column's stages ("/stages/<j>/...") as one into the deployment's: stage j of
// rank `rank` is /stages/<j t + rank>.
std::string GridPointer(const std::string& ptr, size_t t, size_t rank) {
  constexpr std::string_view kStages = "/stages/";
  if (!ptr.starts_with(kStages)) return ptr;
  size_t end = kStages.size(), j = 0;
  while (end < ptr.size() && ptr[end] >= '0' && ptr[end] <= '9') j = j * 10 + (ptr[end++] - '0');
  if (end == kStages.size()) return ptr;
  return fmt::format("{}{}{}", kStages, j * t + rank, ptr.substr(end));
}

// The boundary checks of pipeline stages: between stage p and p+1 of each tensor-parallel rank
// t (its column of the grid); none within one stage's ranks.
std::vector<Diagnostic> GridBoundaries(const Deployment& d, const std::vector<Stage>& stages) {
  const auto t = static_cast<size_t>(std::max<int64_t>(d.tensor_parallel, 1));
  std::vector<Diagnostic> out;
  for (size_t rank = 0; rank < t; ++rank) {
    std::vector<simulator::StageView> column;
    for (size_t k = rank; k < stages.size(); k += t) {
      column.push_back(
          {.manifest = &stages[k].in.check.result.verified->manifest(), .label = stages[k].label});
    }
    for (Diagnostic& x : simulator::CheckBoundaries(column)) {
      x.pointer = GridPointer(x.pointer, t, rank);
      for (verifier::Note& n : x.notes) n.pointer = GridPointer(n.pointer, t, rank);
      out.push_back(std::move(x));
    }
  }
  return out;
}

// Reads and checks every stage; the worst exit code over them (2 unreadable, 1 errors).
int LoadStages(const Deployment& d, const std::string& file, Format format,
               std::vector<Stage>& stages, json& collected) {
  int worst = 0;
  std::vector<Diagnostic> unreadable;
  for (size_t k = 0; k < d.stages.size(); ++k) {
    const DeploymentStage& spec = d.stages[k];
    Stage s{.in = LoadAndCheck(spec.path), .label = StageLabel(d, k, spec.path)};
    const int code = ExitCodeOf(s.in);
    worst = std::max(worst, code);
    if (!s.in.read.ok()) {
      unreadable.push_back({.code = std::string(simulator::deploy_codes::kStageInput),
                            .pointer = verifier::ChildPointer(spec.ptr, "manifest"),
                            .message = fmt::format("stage {}: cannot read its manifest: {}", k,
                                                   s.in.read.message())});
    } else if (code != 0) {
      Report(s.in.check.result.diags, s.label, format, collected);
    }
    stages.push_back(std::move(s));
  }
  Report(unreadable, file, format, collected);
  return worst;
}

// A phase's peak as the row shows it: at the point, or the maximum over the box.
std::optional<int64_t> PhaseBytes(const simulator::PhasePeak& ph, bool at_point, bool& exact) {
  exact = true;
  if (at_point) return ph.at ? std::optional<int64_t>(ph.at->max) : std::nullopt;
  if (!ph.max) return std::nullopt;
  exact = ph.max->exact;
  return ph.max->value;
}

const simulator::PhasePeak* Phase(const PlanReport& r, std::string_view name) {
  for (const simulator::PhasePeak& ph : r.phases.phases) {
    if (ph.name == name) return &ph;
  }
  return nullptr;
}

// The load, once and serve peaks of a stage as its row and JSON show them.
struct PhaseCell {
  std::string_view name;
  std::optional<int64_t> bytes;
  bool exact = true;
};

std::vector<PhaseCell> PhaseCells(const verifier::Manifest& m, const PlanReport& r) {
  std::vector<PhaseCell> out;
  for (std::string_view name : {"load", "once", "serve"}) {
    PhaseCell c{.name = name};
    if (const simulator::PhasePeak* ph = Phase(r, name))
      c.bytes = PhaseBytes(*ph, r.AtPoint(m), c.exact);
    out.push_back(c);
  }
  return out;
}

std::optional<int64_t> JudgedPeak(const verifier::Manifest& m, const PlanReport& r) {
  if (r.AtPoint(m)) return r.phases.peak_at->max;
  if (r.phases.peak) return r.phases.peak->value;
  return std::nullopt;
}

std::string Human(std::optional<int64_t> bytes, bool exact = true) {
  if (!bytes) return "unknown";
  if (*bytes < 0) return fmt::format("{} B", *bytes);
  return (exact ? "" : "<= ") +
         base::FormatBytesOrGiB(static_cast<uint64_t>(*bytes), uint64_t{1} << 24);
}

std::string FitText(const verifier::Manifest& m, const PlanReport& r) {
  const std::optional<bool> fits = r.Fits(m);
  if (!fits) return "-";
  const std::optional<int64_t> peak = JudgedPeak(m, r);
  if (!peak) return "no (peak unknown)";
  const int64_t budget = static_cast<int64_t>(*r.BudgetBytes());
  if (*fits) return fmt::format("yes, {} headroom", Human(budget - *peak));
  return fmt::format("no, {} short", Human(*peak - budget));
}

std::string DeviceText(const PlanReport& r) {
  if (!r.device_bytes) return "-";
  std::string out = fmt::format("{} ({})", r.device_label, base::FormatGiB(*r.device_bytes));
  if (r.reserve_bytes > 0) out += fmt::format(" - {} reserve", Human(r.reserve_bytes));
  return out;
}

// Checkpoint bytes the ranks of a tensor-parallel deployment read: each rank's bound bytes,
// their sum, and the bytes of the distinct (tensor, part) pairs (a part read by several ranks
// counts once there): sum / distinct is 1.0 plus the replicated tensors.
struct ReadTotals {
  std::vector<uint64_t> per_rank;
  uint64_t sum = 0, distinct = 0;
  std::vector<std::string> replicated;  // bound (whole or the same part) by several ranks
};

ReadTotals ReadTotalsOf(const std::vector<Stage>& stages) {
  ReadTotals t;
  std::map<std::string, std::pair<uint64_t, int>> parts;  // "tensor[dim:start+len]" -> bytes, ranks
  for (const Stage& s : stages) {
    uint64_t rank = 0;
    for (const simulator::PlannedBuffer& b : s.report->plan.buffers) {
      if (!b.tensor && !b.tensors) continue;
      rank += b.bytes;
      const std::string bound = fmt::format("{}", fmt::join(simulator::BoundTensors(b), "+"));
      const std::string key = b.slice ? fmt::format("{}[{}:{}+{}]", bound, b.slice->dim,
                                                    b.slice->start, b.slice->length)
                                      : bound;
      auto& [bytes, ranks] = parts[key];
      bytes = b.bytes;
      ++ranks;
    }
    t.per_rank.push_back(rank);
    t.sum += rank;
  }
  for (const auto& [key, v] : parts) {
    t.distinct += v.first;
    if (v.second > 1) t.replicated.push_back(key);
  }
  return t;
}

// Pipeline boundaries checked: P - 1 for each of the T ranks of a stage (0 for one group).
size_t Boundaries(const Deployment& d, size_t n) {
  const size_t t = static_cast<size_t>(std::max<int64_t>(d.tensor_parallel, 1));
  return n / t == 0 ? 0 : (n / t - 1) * t;
}

// The table's first line: the stages and boundaries, the ranks, or the grid of both.
std::string TableHeader(const Deployment& d, const std::string& file, size_t n) {
  const size_t t = static_cast<size_t>(std::max<int64_t>(d.tensor_parallel, 1));
  const size_t pipeline = n / t;
  if (t > 1 && pipeline > 1) {
    return fmt::format(
        "deployment {} ({}): {} ranks, {} pipeline stages x {} tensor-parallel ranks, {} "
        "boundaries verified\n",
        d.name, file, n, pipeline, t, Boundaries(d, n));
  }
  if (t > 1) {
    return fmt::format("deployment {} ({}): {} ranks of tensor parallel {}\n", d.name, file, n, t);
  }
  return fmt::format("deployment {} ({}): {} stage{}, {} boundar{} verified\n", d.name, file, n,
                     n == 1 ? "" : "s", n - 1, n == 2 ? "y" : "ies");
}

// plan --machine: a GPU's predicted load time, and for strided slices how the load reads them
// (by runs, by their covering span or by a map of its pages) and the bytes it reads from the
// checkpoint.
std::string PredictionLine(bool tp, size_t k, const PlanReport& r) {
  const std::optional<simulator::timing::LoadTimePrediction>& p = r.load_time;
  if (!p) return "";
  std::string out =
      fmt::format("  {} {}: load {:.3f} s predicted ({:.2f} GB/s read, {} cache, profile {})",
                  tp ? "rank" : "stage", k, p->total_s,
                  p->wall_s > 0 ? static_cast<double>(p->fill_bytes) / p->wall_s / 1e9 : 0.0,
                  p->cache == simulator::timing::Cache::kHot ? "hot" : "cold", r.machine->device);
  if (p->strided_slices() > 0) {
    out +=
        fmt::format("; {} strided slices, {} by runs ({} runs), {} by span{}; reads {}",
                    p->strided_slices(), p->slices_read_by_runs(), p->slice_runs, p->slices_by_span,
                    p->slices_by_map > 0 ? fmt::format(", {} by map", p->slices_by_map) : "",
                    Human(static_cast<int64_t>(p->read_bytes)));
  }
  return out + "\n";
}

std::string TableText(const Deployment& d, const std::string& file,
                      const std::vector<Stage>& stages) {
  const bool tp = d.tensor_parallel > 1;
  std::string out = TableHeader(d, file, stages.size());
  out += fmt::format("  {:<4}{:<24}{:>14}{:>14}{:>14}  {:<30}{}\n", "GPU", "manifest", "load peak",
                     "once peak", "serve peak", "device", "fits");
  for (size_t k = 0; k < stages.size(); ++k) {
    const verifier::Manifest& m = *stages[k].in.check.manifest;
    const PlanReport& r = *stages[k].report;
    std::string cells;
    for (const PhaseCell& c : PhaseCells(m, r))
      cells += fmt::format("{:>14}", Human(c.bytes, c.exact));
    out +=
        fmt::format("  {:<4}{:<24}{}  {:<30}{}\n", k, m.name, cells, DeviceText(r), FitText(m, r));
  }
  for (size_t k = 0; k < stages.size(); ++k) out += PredictionLine(tp, k, *stages[k].report);
  if (!tp) return out;
  const ReadTotals t = ReadTotalsOf(stages);
  for (size_t k = 0; k < stages.size(); ++k)
    out += fmt::format("  rank {} reads {}\n", k, Human(static_cast<int64_t>(t.per_rank[k])));
  out +=
      fmt::format("  all ranks read {} of {} distinct checkpoint bytes: {:.3f}x",
                  Human(static_cast<int64_t>(t.sum)), Human(static_cast<int64_t>(t.distinct)),
                  t.distinct ? static_cast<double>(t.sum) / static_cast<double>(t.distinct) : 0.0);
  out += t.replicated.empty()
             ? "\n"
             : fmt::format(
                   "; replicated ({}): {}{}\n", t.replicated.size(),
                   fmt::join(t.replicated.begin(),
                             t.replicated.begin() + std::min<size_t>(t.replicated.size(), 6), ", "),
                   t.replicated.size() > 6 ? ", ..." : "");
  return out;
}

json StageJson(size_t k, const DeploymentStage& spec, const Stage& s) {
  const verifier::Manifest& m = *s.in.check.manifest;
  const PlanReport& r = *s.report;
  const bool at_point = r.AtPoint(m);
  json j = {{"gpu", k}, {"file", spec.path}, {"manifest", m.name}};
  for (const PhaseCell& c : PhaseCells(m, r)) {
    j[std::string(c.name)] =
        c.bytes ? json{{"bytes", *c.bytes}, {"exact", c.exact}} : json(nullptr);
  }
  const std::optional<int64_t> peak = JudgedPeak(m, r);
  j["peak"] = peak ? json(*peak) : json(nullptr);
  j["at_point"] = at_point;
  if (r.device_bytes) {
    j["device"] = {{"label", r.device_label},
                   {"bytes", *r.device_bytes},
                   {"reserve", r.reserve_bytes},
                   {"budget", *r.BudgetBytes()}};
    j["fits"] = *r.Fits(m);
    j["headroom"] = peak ? json(static_cast<int64_t>(*r.BudgetBytes()) - *peak) : json(nullptr);
  } else {
    j["device"] = nullptr;
    j["fits"] = nullptr;
    j["headroom"] = nullptr;
  }
  j["report"] = ReportJson(m, r);
  return j;
}

// The device memory a stage is judged against: its own, else the deployment's, else the
// command line's --device-memory.
PlanCliOptions StageOptions(const PlanCliOptions& o, const Deployment& d,
                            const DeploymentStage& spec) {
  PlanCliOptions s = o;
  s.file = spec.path;
  if (spec.device_memory) {
    s.device_memory = spec.device_memory;
  } else if (d.device_memory) {
    s.device_memory = d.device_memory;
  }
  return s;
}

int Fail(Format format, const json& collected, int code) {
  if (format == Format::kJson) std::puts(DumpJson({{"diagnostics", collected}}).c_str());
  return code;
}

// The table (or its JSON) on stdout; true when every stage fits (or has no device).
bool PrintDeployment(const Deployment& d, const PlanCliOptions& options,
                     const std::vector<Stage>& stages) {
  bool fits = true;
  for (const Stage& s : stages) fits = fits && s.report->Fits(*s.in.check.manifest).value_or(true);
  if (options.format == Format::kJson) {
    const bool tp = d.tensor_parallel > 1;
    json j = {{"deployment", d.name},
              {"file", options.file},
              {"boundaries", Boundaries(d, stages.size())}};
    if (tp) j["tensor_parallel"] = d.tensor_parallel;
    j["stages"] = json::array();
    for (size_t k = 0; k < stages.size(); ++k)
      j["stages"].push_back(StageJson(k, d.stages[k], stages[k]));
    if (tp) {
      const ReadTotals t = ReadTotalsOf(stages);
      for (size_t k = 0; k < stages.size(); ++k) j["stages"][k]["bytes_read"] = t.per_rank[k];
      j["bytes_read"] = t.sum;
      j["distinct_bytes"] = t.distinct;
      j["replicated"] = t.replicated;
    }
    j["fits"] = fits;
    std::puts(DumpJson(j).c_str());
  } else {
    std::fputs(TableText(d, options.file, stages).c_str(), stdout);
  }
  return fits;
}

}  // namespace

int RunPlanDeployment(const PlanCliOptions& options) {
  if (const int rc = RejectOptions(options); rc != 0) return rc;
  const base::Result<std::string> text =
      verifier::ReadManifestFile(options.file, verifier::ParseLimits{}.max_bytes);
  if (!text.ok()) {
    std::fprintf(stderr, "loadplan plan: %s\n", text.status().message().c_str());
    return 2;
  }
  json collected = json::array();
  const simulator::DeploymentParse parsed = simulator::ParseDeployment(*text, options.file);
  if (!parsed.deployment) {
    Report(parsed.diags, options.file, options.format, collected);
    return Fail(options.format, collected, 1);
  }
  const Deployment& d = *parsed.deployment;
  std::vector<Stage> stages;
  if (const int rc = LoadStages(d, options.file, options.format, stages, collected); rc != 0)
    return Fail(options.format, collected, rc);
  const std::vector<Diagnostic> b = GridBoundaries(d, stages);
  if (!b.empty()) {
    Report(b, options.file, options.format, collected);
    return Fail(options.format, collected, 1);
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    Outcome<PlanReport> r = MakePlanReport(StageOptions(options, d, d.stages[k]), stages[k].in);
    if (!r.ok()) {
      std::fprintf(stderr, "loadplan plan: %s: not planned\n", stages[k].label.c_str());
      return r.exit_code();
    }
    stages[k].report = std::move(*r);
  }
  const bool fits = PrintDeployment(d, options, stages);
  return fits ? 0 : 1;
}

}  // namespace loadplan::cli
