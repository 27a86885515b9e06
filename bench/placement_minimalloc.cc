// Benchmark: placement policies on MiniMalloc's challenging suite (height / best known, time).
//
// Usage: bench_placement_minimalloc [minimalloc-data-dir] [work_budget] [portfolio] [threads]
// [csv-out-dir]. Prints a markdown table (the default policy is the exact search portfolio; its
// member 0 is the single search); also times first fit and best fit on a random 100k-buffer
// problem. With csv-out-dir, writes each file's placement there when it is below the best known.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "base/seconds.h"
#include "simulator/placement/placement.h"

namespace {

namespace sim = loadplan::simulator;
namespace fs = std::filesystem;

// Best known heights from shared/data/minimalloc/RESULTS-minimalloc.md.
const std::map<std::string, uint64_t> kBestKnown = {
    {"A", 1048576}, {"B", 1048576}, {"C", 1039360}, {"D", 1031168}, {"E", 1048576}, {"F", 1048576},
    {"G", 1048576}, {"H", 1048576}, {"I", 1048576}, {"J", 1041408}, {"K", 1048576}};

template <typename F>
auto Timed(F&& f, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  seconds = loadplan::base::SecondsSince(start);
  return result;
}

// A random problem: n buffers arriving over time, lifetimes 1..2*mean_life, sizes 1..1 MiB.
sim::PlacementProblem RandomProblem(size_t n, int64_t mean_life, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> life(1, 2 * mean_life);
  std::uniform_int_distribution<uint64_t> size(1, 1 << 20);
  sim::PlacementProblem p{.buffers = {}, .alignment = 256};
  for (size_t i = 0; i < n; ++i) {
    const auto lower = static_cast<int64_t>(i);
    p.buffers.push_back({fmt::format("b{}", i), lower, lower + life(rng), size(rng)});
  }
  return p;
}

// An independent pairwise check (the benchmark does not link the plan checker).
bool Valid(const sim::PlacementProblem& p, const sim::Placement& r) {
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const sim::PlacementBuffer& a = p.buffers[i];
    if (r.offsets[i] + a.size > r.height) return false;
    for (size_t j = i + 1; j < p.buffers.size(); ++j) {
      const sim::PlacementBuffer& b = p.buffers[j];
      const bool time = a.lower < b.upper && b.lower < a.upper;
      const bool space =
          r.offsets[i] < r.offsets[j] + b.size && r.offsets[j] < r.offsets[i] + a.size;
      if (time && space) return false;
    }
  }
  return true;
}

void BenchLarge() {
  const sim::PlacementProblem p = RandomProblem(100000, 50, 1);
  const uint64_t lb = sim::LowerBound(p);
  fmt::print(
      "\nRandom problem: 100000 buffers, lifetimes 1..100 (about 50 live), sizes 1..1 MiB, "
      "alignment 256; LB {}\n\n| policy | height / LB | time |\n|---|---:|---:|\n",
      lb);
  for (const sim::PlacementPolicy policy :
       {sim::PlacementPolicy::kFirstFit, sim::PlacementPolicy::kBestFit}) {
    double s = 0;
    sim::PlacementOptions options;
    options.policy = policy;
    const sim::Placement r =
        Timed([&] { return sim::Place(p, options).value(); }, s);  // valid: sizes <= 1 MiB
    fmt::print("| {} | {:.3f} | {:.3f} s |\n", sim::PlacementPolicyName(policy),
               static_cast<double>(r.height) / static_cast<double>(lb), s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? fs::path(argv[1])
                                : fs::path(__FILE__).parent_path() / "../../shared/data/minimalloc";
  sim::PlacementOptions exact_options;
  if (argc > 2) exact_options.work_budget = std::stoull(argv[2]);
  if (argc > 3) exact_options.portfolio = std::stoull(argv[3]);
  if (argc > 4) exact_options.threads = std::stoull(argv[4]);
  const std::string csv_dir = argc > 5 ? argv[5] : "";
  fmt::print(
      "Exact search budget per member: {} work steps, {} nodes; portfolio {} members, threads {} "
      "(0: {} cores)\n\n",
      exact_options.work_budget, exact_options.node_budget, exact_options.portfolio,
      exact_options.threads, std::thread::hardware_concurrency());
  fmt::print(
      "| file | n | LB | best known | first-fit | best-fit | single search | best (portfolio) | "
      "height | winner | member heights / best known | work | proven | valid "
      "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|\n");
  double log_ff = 0, log_bf = 0, log_single = 0, log_ex = 0;
  int files = 0;
  for (const auto& [name, best] : kBestKnown) {
    const fs::path path = dir / "challenging" / (name + ".1048576.csv");
    const sim::CsvReadResult read = sim::ReadPlacementCsvFile(path.string());
    if (!read.problem) {
      fmt::print(stderr, "cannot read {}\n", path.string());
      return 1;
    }
    const sim::PlacementProblem& p = *read.problem;
    double t_ff = 0, t_bf = 0, t_ex = 0;
    const sim::Placement ff = Timed([&] { return sim::FirstFitPlace(p); }, t_ff);
    const sim::Placement bf = Timed([&] { return sim::BestFitPlace(p); }, t_bf);
    const sim::PortfolioResult pf = Timed(
        [&] {
          const sim::Placement h = sim::BestFitPlace(p);
          return sim::PortfolioPlace(p, h, exact_options);
        },
        t_ex);
    const sim::ExactResult& ex = pf.best;
    auto ratio = [&](uint64_t h) { return static_cast<double>(h) / static_cast<double>(best); };
    log_ff += std::log(ratio(ff.height));
    log_bf += std::log(ratio(bf.height));
    log_single += std::log(ratio(pf.heights[0]));
    log_ex += std::log(ratio(ex.placement.height));
    ++files;
    const bool valid = Valid(p, ff) && Valid(p, bf) && Valid(p, ex.placement);
    std::string members;
    for (const uint64_t h : pf.heights)
      members += fmt::format("{}{}", members.empty() ? "" : " ",
                             h == 0 ? "-" : fmt::format("{:.3f}", ratio(h)));
    fmt::print(
        "| {} | {} | {} | {} | {:.3f} ({:.3f} s) | {:.3f} ({:.3f} s) | {:.3f} | {:.3f} ({:.3f} s) "
        "| {} | {} | {} | {:.0f}M | {} | {} |\n",
        name, p.buffers.size(), sim::LowerBound(p), best, ratio(ff.height), t_ff, ratio(bf.height),
        t_bf, ratio(pf.heights[0]), ratio(ex.placement.height), t_ex, ex.placement.height,
        pf.member, members, static_cast<double>(pf.work) / 1e6, ex.proven_optimal ? "yes" : "no",
        valid ? "yes" : "NO");
    if (!csv_dir.empty() && valid && ex.placement.height < best) {
      const fs::path out = fs::path(csv_dir) / fmt::format("{}.{}.csv", name, ex.placement.height);
      std::FILE* f = std::fopen(out.string().c_str(), "w");
      if (f != nullptr) {
        const std::string text = sim::WritePlacementCsv(p, ex.placement);
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
      }
    }
    std::fflush(stdout);
  }
  fmt::print("| geometric mean | | | | {:.3f} | {:.3f} | {:.3f} | {:.3f} | | | | | | |\n",
             std::exp(log_ff / files), std::exp(log_bf / files), std::exp(log_single / files),
             std::exp(log_ex / files));
  BenchLarge();
  return 0;
}
