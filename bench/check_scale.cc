// Benchmark: time `check` (parse + verify) on generated manifests of growing size.
// Usage: bench_check_scale [N...]   (default 1000 10000 100000 buffers)
// Prints a markdown table: buffers, calls, bytes, parse+verify ms, ms per 1k buffers.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/verify.h"

namespace {

// A manifest of `units` repeated blocks: a source, its derived carry, a weight, one
// derive program (one call) per block, and one serving program reading every carry
// and weight. Buffers = 3 * units + 2, calls = 2 * units.
std::string Generate(int units) {
  using nlohmann::json;
  json m = {{"schema", 1},
            {"name", fmt::format("scale-{}", units)},
            {"vars", {{"batch", {{"min", 1}, {"max", 256}}}}},
            {"load", {{"lanes", 4}, {"prefetch", 1}}}};
  json& b = m["buffers"];
  json& p = m["programs"];
  m["kernels"] = {{"copy",
                   {{"params",
                     {{"src", {{"access", "read"}, {"dtype", "U8"}, {"extent", "n"}}},
                      {"dst", {{"access", "write"}, {"dtype", "U8"}, {"extent", "n"}}},
                      {"n", "scalar"}}}}},
                  {"use",
                   {{"params",
                     {{"w", {{"access", "read"}, {"dtype", "U8"}, {"extent", "n"}}},
                      {"x", {{"access", "read"}, {"dtype", "U8"}, {"extent", "n"}}},
                      {"y", {{"access", "write"}, {"dtype", "F32"}, {"extent", "t*16"}}},
                      {"n", "scalar"},
                      {"t", "scalar"}}}}}};
  b["act"] = {{"kind", "state"}, {"dtype", "F32"}, {"shape", json::array({"batch", 16})}};
  b["tokens"] = {{"kind", "input"}, {"dtype", "I32"}, {"shape", json::array({"batch"})}};
  json serve = json::array();
  for (int i = 0; i < units; ++i) {
    const auto n = 4096 + 256 * (i % 7);
    b[fmt::format("l{}.raw", i)] = {{"kind", "source"},
                                    {"tensor", fmt::format("model.l{}.raw", i)},
                                    {"dtype", "U8"},
                                    {"shape", json::array({n})}};
    b[fmt::format("l{}.w", i)] = {{"kind", "carry"}, {"dtype", "U8"}, {"shape", json::array({n})}};
    b[fmt::format("l{}.norm", i)] = {{"kind", "weight"},
                                     {"tensor", fmt::format("model.l{}.norm", i)},
                                     {"dtype", "U8"},
                                     {"shape", json::array({n})}};
    p[fmt::format("derive.l{}", i)] = {{"derive", true},
                                       {"calls", json::array({{{"kernel", "copy"},
                                                               {"grid", json::array({64})},
                                                               {"args",
                                                                {{"src", fmt::format("l{}.raw", i)},
                                                                 {"dst", fmt::format("l{}.w", i)},
                                                                 {"n", n}}}}})}};
    serve.push_back({{"kernel", "use"},
                     {"grid", json::array({"batch"})},
                     {"args",
                      {{"w", fmt::format("l{}.norm", i)},
                       {"x", fmt::format("l{}.w", i)},
                       {"y", "act"},
                       {"n", n},
                       {"t", "batch"}}}});
  }
  p["decode"] = {{"batch", "batch"}, {"graph", true}, {"calls", serve}};
  return m.dump();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoi(argv[i]));
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  std::puts(
      "| buffers | calls | JSON MiB | check ms (best of 3) | µs per buffer | errors | warnings |");
  std::puts("|---:|---:|---:|---:|---:|---:|---:|");
  for (int target : sizes) {
    const int units = target / 3;
    const std::string text = Generate(units);
    double best = 1e300;
    loadplan::verifier::CheckOutput out;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      out = loadplan::verifier::CheckText(text);
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    size_t errors = 0, warnings = 0;
    for (const auto& d : out.result.diags) {
      (d.severity == loadplan::verifier::Severity::kError ? errors : warnings)++;
    }
    const int buffers = 3 * units + 2;
    std::printf("| %d | %d | %.1f | %.1f | %.2f | %zu | %zu |\n", buffers, 2 * units,
                text.size() / 1048576.0, best, 1000.0 * best / buffers, errors, warnings);
    if (errors > 0) {
      std::fputs(
          loadplan::verifier::FormatText(out.result.diags, "generated").substr(0, 2000).c_str(),
          stderr);
    }
  }
  return 0;
}
