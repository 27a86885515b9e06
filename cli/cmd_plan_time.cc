// `plan --machine/--cache/--fit`: see cmd_plan_time.h.
#include "cli/cmd_plan_time.h"

#include <algorithm>
#include <cstdio>

#include "cli/pipeline.h"
#include "simulator/phases/phases.h"

namespace loadplan::cli {

namespace timing = simulator::timing;

namespace {

// The search `--fit SIZE` makes: options the user fixed are not varied; the manifest's own
// are searched and preferred among equal predictions.
timing::FitOptions FitOptionsOf(const PlanCliOptions& o, const verifier::LoadOptions& own,
                                uint64_t size, const timing::PredictOptions& predict) {
  timing::FitOptions f{.size = size, .predict = predict, .base = o.plan};
  if (o.plan.lanes) f.lanes = {std::max<uint32_t>(*o.plan.lanes, 1)};
  if (!o.plan.lanes) f.own_lanes = std::max<uint32_t>(own.lanes, 1);
  if (o.plan.prefetch) f.prefetch = {*o.plan.prefetch};
  if (!o.plan.prefetch && !o.plan.naive) f.own_prefetch = own.prefetch;
  if (o.plan.naive) f.prefetch.clear();
  return f;
}

}  // namespace

int AddLoadTime(const PlanCliOptions& o, const verifier::VerifiedManifest& verified,
                PlanReport& r) {
  if (!o.machine && !o.fit) return 0;
  if (o.cache != "hot" && o.cache != "cold") {
    std::fprintf(stderr, "loadplan plan: --cache %s: expected hot or cold\n", o.cache.c_str());
    return 2;
  }
  if (o.machine) {
    base::Result<timing::MachineProfile> p = timing::ReadProfileFile(*o.machine);
    if (!p.ok()) {
      std::fprintf(stderr, "loadplan plan: --machine %s\n", p.status().message().c_str());
      return 2;
    }
    r.machine = std::move(*p);
  } else {
    r.machine = timing::DefaultH200Profile();
  }
  const timing::PredictOptions predict{.cache = o.cache == "hot" ? timing::Cache::kHot
                                                                 : timing::Cache::kCold};
  if (o.fit) {
    const std::optional<simulator::DeviceMemory> size = simulator::ResolveDeviceMemory(*o.fit);
    if (size && size->bytes == 0) {
      std::fprintf(stderr, "loadplan plan: --fit %s: a size of 0 bytes fits no load\n",
                   o.fit->c_str());
      return 2;
    }
    if (!size) {
      std::fprintf(stderr,
                   "loadplan plan: --fit %s: not a size (\"80GiB\", \"16GB\", bytes) or a "
                   "preset (%s)\n",
                   o.fit->c_str(), simulator::PresetNames().c_str());
      return 2;
    }
    r.fit = timing::FitSearch(verified, *r.machine,
                              FitOptionsOf(o, verified.manifest().load, size->bytes, predict));
    const timing::FitCandidate* pick = r.fit->choice() ? r.fit->choice() : r.fit->smallest();
    if (pick != nullptr) {  // the report describes the chosen plan, checked like any other
      Outcome<simulator::LoadPlan> chosen = PlanChecked(verified, pick->options, "loadplan plan");
      if (!chosen.ok()) return chosen.exit_code();
      r.plan = std::move(*chosen);
    }
  }
  r.load_time = timing::PredictLoad(r.plan, *r.machine, predict);
  return 0;
}

std::string LoadTimeText(const PlanReport& r) {
  if (!r.machine) return "";
  std::string s = "\n";
  if (r.fit) s += timing::FitText(*r.fit, *r.machine) + "\n";
  if (r.load_time) s += timing::PredictionText(*r.load_time, *r.machine);
  return s;
}

bool FitFound(const PlanReport& r) { return !r.fit || r.fit->choice() != nullptr; }

}  // namespace loadplan::cli
