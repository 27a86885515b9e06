// The configuration search of fit.h.
#include "simulator/timing/fit.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "base/bytes.h"
#include "simulator/plan_totals.h"

namespace loadplan::simulator::timing {
namespace {

int PolicyRank(PlacementPolicy p) {
  switch (p) {
    case PlacementPolicy::kFirstFit: return 0;
    case PlacementPolicy::kBestFit: return 1;
    case PlacementPolicy::kBest: return 2;
    case PlacementPolicy::kExact: return 3;
  }
  return 4;
}

auto SpeedKey(const FitCandidate& c) {
  return std::make_tuple(c.prediction.total_s, !c.own, c.load_peak, c.options.naive,
                         c.options.lanes.value_or(1), c.options.prefetch.value_or(0),
                         PolicyRank(c.options.placement));
}
auto PeakKey(const FitCandidate& c) {
  return std::make_tuple(c.load_peak, c.prediction.total_s, c.options.naive,
                         c.options.lanes.value_or(1), c.options.prefetch.value_or(0),
                         PolicyRank(c.options.placement));
}

// Staged on the manifest's own lanes and prefetch (those of them the search varies).
bool IsOwn(const FitOptions& o, const PlanOptions& p) {
  if (p.naive || (!o.own_lanes && !o.own_prefetch)) return false;
  return (!o.own_lanes || p.lanes == o.own_lanes) &&
         (!o.own_prefetch || p.prefetch == o.own_prefetch);
}

FitCandidate Evaluate(const verifier::VerifiedManifest& verified, const MachineProfile& profile,
                      const FitOptions& o, PlanOptions options) {
  const LoadPlan plan = Plan(verified, options);
  FitCandidate c{.options = options, .load_peak = LoadPeakBytes(plan)};
  c.floor = base::AddSat(plan.resident_bytes_rounded,
                         base::RoundUp(plan.lower_bound, std::max<uint64_t>(plan.granularity, 1)));
  c.prediction = PredictLoad(plan, profile, o.predict);
  c.fits = c.load_peak <= o.size;
  c.own = IsOwn(o, options);
  return c;
}

// `grid` with `own` added where it is not among them, in order (an empty grid stays empty:
// nothing of that kind is searched).
std::vector<uint32_t> WithOwn(std::vector<uint32_t> grid, std::optional<uint32_t> own) {
  if (own && !grid.empty() && std::find(grid.begin(), grid.end(), *own) == grid.end()) {
    grid.insert(std::upper_bound(grid.begin(), grid.end(), *own), *own);
  }
  return grid;
}

std::string Gib(uint64_t b) { return base::FormatGiB(b); }

}  // namespace

std::string FitCandidate::Label() const {
  if (options.naive) return fmt::format("naive, lanes {}", options.lanes.value_or(1));
  return fmt::format("staged, lanes {}, prefetch {}, {}{}", options.lanes.value_or(1),
                     options.prefetch.value_or(0), PlacementPolicyName(options.placement),
                     own ? " (the manifest's)" : "");
}

const FitCandidate* FitResult::smallest() const {
  if (ranked.empty()) return nullptr;
  return &*std::min_element(ranked.begin(), ranked.end(),
                            [](const auto& a, const auto& b) { return PeakKey(a) < PeakKey(b); });
}

const FitCandidate* FitResult::fastest() const {
  if (ranked.empty()) return nullptr;
  return &*std::min_element(ranked.begin(), ranked.end(),
                            [](const auto& a, const auto& b) { return SpeedKey(a) < SpeedKey(b); });
}

FitResult FitSearch(const verifier::VerifiedManifest& verified, const MachineProfile& profile,
                    const FitOptions& options) {
  FitResult r{.size = options.size};
  const std::vector<uint32_t> prefetches = WithOwn(options.prefetch, options.own_prefetch);
  for (const uint32_t lanes : WithOwn(options.lanes, options.own_lanes)) {
    for (const uint32_t prefetch : prefetches) {
      for (const PlacementPolicy policy : options.policies) {
        PlanOptions p = options.base;
        p.lanes = lanes;
        p.prefetch = prefetch;
        p.placement = policy;
        p.naive = false;
        r.ranked.push_back(Evaluate(verified, profile, options, p));
      }
    }
    if (options.naive) {
      PlanOptions p = options.base;
      p.lanes = lanes;
      p.prefetch.reset();
      p.placement = PlacementPolicy::kFirstFit;
      p.naive = true;
      r.ranked.push_back(Evaluate(verified, profile, options, p));
    }
  }
  const auto mid = std::stable_partition(r.ranked.begin(), r.ranked.end(),
                                         [](const FitCandidate& c) { return c.fits; });
  r.fitting = static_cast<size_t>(mid - r.ranked.begin());
  std::sort(r.ranked.begin(), mid,
            [](const auto& a, const auto& b) { return SpeedKey(a) < SpeedKey(b); });
  std::sort(mid, r.ranked.end(),
            [](const auto& a, const auto& b) { return PeakKey(a) < PeakKey(b); });
  return r;
}

nlohmann::json FitJson(const FitResult& r, const MachineProfile& profile) {
  nlohmann::json rows = nlohmann::json::array();
  for (const FitCandidate& c : r.ranked) {
    rows.push_back({{"label", c.Label()},
                    {"naive", c.options.naive},
                    {"lanes", c.options.lanes.value_or(1)},
                    {"prefetch", c.options.naive ? nlohmann::json(nullptr)
                                                 : nlohmann::json(c.options.prefetch.value_or(0))},
                    {"placement", PlacementPolicyName(c.options.placement)},
                    {"load_peak", c.load_peak},
                    {"floor", c.floor},
                    {"fits", c.fits},
                    {"own", c.own},
                    {"wall_s", c.prediction.wall_s},
                    {"total_s", c.prediction.total_s}});
  }
  nlohmann::json j = {
      {"size", r.size},
      {"cache", CacheName(r.ranked.empty() ? Cache::kHot : r.ranked[0].prediction.cache)},
      {"profile", profile.source},
      {"builtin_profile", profile.builtin},
      {"fitting", r.fitting},
      {"choice", r.choice() ? nlohmann::json(0) : nlohmann::json(nullptr)},
      {"candidates", rows}};
  if (const FitCandidate* s = r.smallest(); s != nullptr && !r.choice()) {
    j["needs_bytes"] = s->load_peak - std::min(s->load_peak, r.size);
    j["smallest"] = s->Label();
  }
  return j;
}

std::string FitText(const FitResult& r, const MachineProfile& profile, size_t runners_up) {
  std::string s =
      fmt::format("Fit in {} ({} page cache; times from {}):\n", Gib(r.size),
                  r.ranked.empty() ? "hot" : CacheName(r.ranked[0].prediction.cache),
                  profile.builtin ? "the built-in H200 default profile"
                                  : "profile " + profile.device + ", " + profile.measured);
  auto row = [](const FitCandidate& c) {
    return fmt::format("{:<59} peak {:>12}  {:.3f} s (load {:.3f} s)", c.Label(), Gib(c.load_peak),
                       c.prediction.total_s, c.prediction.wall_s);
  };
  if (const FitCandidate* c = r.choice()) {
    s += "  choice:   " + row(*c) + "\n";
    for (size_t i = 1; i < std::min(r.fitting, runners_up + 1); ++i)
      s += "  then:     " + row(r.ranked[i]) + "\n";
    if (r.fitting > runners_up + 1)
      s += fmt::format("  ... {} more fit; {} do not\n", r.fitting - runners_up - 1,
                       r.ranked.size() - r.fitting);
    const FitCandidate* f = r.fastest();
    if (f != nullptr && !f->fits)
      s += fmt::format("  the fastest overall ({}, {:.3f} s) needs {} more\n", f->Label(),
                       f->prediction.total_s, Gib(f->load_peak - r.size));
    return s;
  }
  const FitCandidate* best = r.smallest();
  if (best == nullptr) return s + "  nothing to plan\n";
  s += fmt::format("  nothing fits: the smallest peak is {} ({}): needs {} more than {}\n",
                   Gib(best->load_peak), best->Label(), Gib(best->load_peak - r.size), Gib(r.size));
  if (best->floor < best->load_peak)
    s += fmt::format(
        "  no placement of that plan goes below {} (resident + the arena's lower bound)\n",
        Gib(best->floor));
  return s;
}

}  // namespace loadplan::simulator::timing
