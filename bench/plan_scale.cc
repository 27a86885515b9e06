// Benchmark: time Plan() on generated manifests with growing source counts, and the memory
// phases (ComputePhases: the serve-phase sum) with growing serving-buffer counts.
// Usage: bench_plan_scale [N...]   (default 1000 10000 100000 sources and serving buffers)
// Prints two markdown tables: sources, calls, steps, plan ms (best of 3) per placement policy,
// ns per (n log2 n), the arena over the lower bound, and CheckPlan's time on the first-fit plan
// (the commands run the checker on every plan they use); then serving buffers, plan ms and
// phases ms with ns per (n log2 n).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simulator/check/plan_check.h"
#include "simulator/phases/phases.h"
#include "simulator/planner/planner.h"
#include "verifier/manifest.h"
#include "verifier/verify.h"

namespace {

using loadplan::verifier::Access;
using loadplan::verifier::BufferKind;
using loadplan::verifier::Expr;

std::optional<loadplan::base::Dtype> U8Dtype() { return loadplan::base::Dtype::kU8; }

loadplan::verifier::Buffer U8(std::string name, BufferKind kind, int64_t bytes) {
  loadplan::verifier::Buffer b{.name = name, .kind = kind, .shape = {Expr::Const(bytes)}};
  if (kind == BufferKind::kSource) b.tensor = "model." + name;
  return b;
}

// `n` sources; derive program i reads sources i and i+1 (windows overlap pairwise, sizes
// vary over 7 values from 64 KiB to 1 MiB) and writes carry i. Names are zero-padded so
// name order is generation order.
loadplan::verifier::Manifest Generate(int n) {
  loadplan::verifier::Manifest m;
  m.name = fmt::format("plan-scale-{}", n);
  m.load = {.lanes = 4, .prefetch = 2, .ptr = "/load"};
  // prep(a, b -> dst): each buffer param touches its whole buffer, whose byte count the call
  // passes as a scalar (na, nb, nd), so the manifest verifies (Plan takes only a verified one).
  m.kernels.push_back(
      {.name = "prep",
       .params = {
           {.name = "a", .access = Access::kRead, .dtype = U8Dtype(), .extent = Expr::Var("na")},
           {.name = "b", .access = Access::kRead, .dtype = U8Dtype(), .extent = Expr::Var("nb")},
           {.name = "dst", .access = Access::kWrite, .dtype = U8Dtype(), .extent = Expr::Var("nd")},
           {.name = "na", .access = Access::kScalar},
           {.name = "nb", .access = Access::kScalar},
           {.name = "nd", .access = Access::kScalar}}});
  for (int i = 0; i < n; ++i) {
    const int64_t size = (64 << 10) * (1 + (i * 7919) % 16);
    m.buffers.push_back(U8(fmt::format("l{:07}.raw", i), BufferKind::kSource, size));
    m.buffers.push_back(U8(fmt::format("l{:07}.w", i), BufferKind::kCarry, size / 2));
    loadplan::verifier::Call c{.kernel = "prep", .grid = {Expr::Const(64)}};
    const int next = std::min(i + 1, n - 1);
    const int64_t next_size = (64 << 10) * (1 + (next * 7919) % 16);
    c.args = {{.param = "a", .buffer = fmt::format("l{:07}.raw", i)},
              {.param = "b", .buffer = fmt::format("l{:07}.raw", next)},
              {.param = "dst", .buffer = fmt::format("l{:07}.w", i)},
              {.param = "na", .scalar = Expr::Const(size)},
              {.param = "nb", .scalar = Expr::Const(next_size)},
              {.param = "nd", .scalar = Expr::Const(size / 2)}};
    m.programs.push_back({.name = fmt::format("derive.l{:07}", i), .derive = true, .calls = {c}});
  }
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(m.buffers.begin(), m.buffers.end(), by_name);
  loadplan::verifier::AssignPointers(m);
  return m;
}

// One derive call and `n` serving buffers (state, scratch, input, output in turn) whose sizes
// are 1..7 times a batch variable in [1, 256].
loadplan::verifier::Manifest GenerateServing(int n) {
  loadplan::verifier::Manifest m = Generate(1);
  m.name = fmt::format("serve-scale-{}", n);
  m.vars.push_back({.name = "batch", .min = 1, .max = 256});
  const BufferKind kinds[] = {BufferKind::kState, BufferKind::kScratch, BufferKind::kInput,
                              BufferKind::kOutput};
  for (int i = 0; i < n; ++i) {
    m.buffers.push_back({.name = fmt::format("s{:07}", i),
                         .kind = kinds[i % 4],
                         .shape = {Expr::Var("batch"), Expr::Const(4096 * (1 + i % 7))}});
  }
  auto by_name = [](const auto& a, const auto& b) { return a.name < b.name; };
  std::sort(m.buffers.begin(), m.buffers.end(), by_name);
  loadplan::verifier::AssignPointers(m);
  return m;
}

// Plan takes a verified manifest: the generated one, or nullopt (and a message) when it fails.
std::optional<loadplan::verifier::VerifiedManifest> Verified(
    const loadplan::verifier::Manifest& m) {
  loadplan::verifier::VerifyResult r = loadplan::verifier::Verify(m);
  if (!r.verified)
    std::fprintf(stderr, "the generated manifest %s does not verify\n", m.name.c_str());
  return std::move(r.verified);
}

// Milliseconds of the fastest of three runs of `f`.
template <typename F>
double BestOfThree(F&& f) {
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  using loadplan::simulator::PlacementPolicy;
  using loadplan::simulator::Plan;
  std::puts(
      "| sources | calls | steps | first-fit ms | ns per n·log2(n) | arena / lower bound | "
      "best-fit ms | arena / lower bound | check ms |");
  std::puts("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (int n : sizes) {
    const loadplan::verifier::Manifest m = Generate(n);
    const std::optional<loadplan::verifier::VerifiedManifest> verified = Verified(m);
    if (!verified) return 1;
    const loadplan::verifier::VerifiedManifest& vm = *verified;
    loadplan::simulator::LoadPlan first, best;
    const double ms_first =
        BestOfThree([&] { first = Plan(vm, {.placement = PlacementPolicy::kFirstFit}); });
    const double ms_best =
        BestOfThree([&] { best = Plan(vm, {.placement = PlacementPolicy::kBestFit}); });
    const double nlogn = n * std::log2(std::max(2, n));
    size_t violations = 0;
    const double ms_check =
        BestOfThree([&] { violations = loadplan::simulator::CheckPlan(m, first).size(); });
    std::printf("| %d | %zu | %zu | %.1f | %.1f | %.4f | %.1f | %.4f | %.1f%s |\n", n,
                first.calls.size(), first.steps.size(), ms_first, 1e6 * ms_first / nlogn,
                static_cast<double>(first.arena_bytes) / first.lower_bound, ms_best,
                static_cast<double>(best.arena_bytes) / best.lower_bound, ms_check,
                violations == 0 ? "" : " (VIOLATIONS)");
  }
  std::puts("\n| serving buffers | plan ms | phases ms | ns per n·log2(n) | serve peak GiB |");
  std::puts("|---:|---:|---:|---:|---:|");
  for (int n : sizes) {
    const loadplan::verifier::Manifest m = GenerateServing(n);
    const std::optional<loadplan::verifier::VerifiedManifest> verified = Verified(m);
    if (!verified) return 1;
    loadplan::simulator::LoadPlan plan;
    loadplan::simulator::MemoryPhases phases;
    const double ms_plan = BestOfThree([&] { plan = Plan(*verified); });
    const double ms_phases =
        BestOfThree([&] { phases = loadplan::simulator::ComputePhases(m, plan); });
    const double nlogn = n * std::log2(std::max(2, n));
    std::printf("| %d | %.1f | %.1f | %.1f | %.2f |\n", n, ms_plan, ms_phases,
                1e6 * ms_phases / nlogn,
                phases.peak ? static_cast<double>(phases.peak->value) / (1ull << 30) : -1.0);
  }
  return 0;
}
