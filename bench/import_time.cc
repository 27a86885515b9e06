// Benchmark: `loadplan import` of model folders (config.json + safetensors headers only), the
// phases apart: open + parse the headers, the whole import, and writing the manifest text.
// Usage: bench_import_time [--rounds N] DIR...   (scripts/bench-import makes the skeletons)
// Prints a markdown table of medians: model, shards, tensors, then milliseconds: the import's
// steps (config, headers, check against the config, build, verify; the manifest text is written
// on a second thread while verify runs: write), and the whole import (what `loadplan import`
// does before it saves the text).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "importer/import.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      dirs.push_back(a);
    }
  }
  if (dirs.empty()) {
    std::fprintf(stderr, "usage: bench_import_time [--rounds N] MODEL_DIR...\n");
    return 2;
  }
  std::printf(
      "| model | shards | tensors | config | headers | check | build | verify | write (beside "
      "verify) "
      "| import | manifest MB |\n");
  std::printf(
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const std::string& dir : dirs) {
    std::vector<double> config, headers, check, build, verify, import, write;
    size_t shards = 0, tensors = 0, bytes = 0;
    for (int r = 0; r < rounds; ++r) {
      const auto t1 = Clock::now();
      const auto result = loadplan::importer::ImportModel(dir);
      const auto t2 = Clock::now();
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", dir.c_str(), result.status().message().c_str());
        return 1;
      }
      const std::string& text = result->text;  // written while verify ran (ms.write)
      config.push_back(result->ms.config);
      headers.push_back(result->ms.headers);
      check.push_back(result->ms.check);
      build.push_back(result->ms.build);
      verify.push_back(result->ms.verify);
      import.push_back(Ms(t1, t2));
      write.push_back(result->ms.write);
      shards = result->shards;
      tensors = result->tensors;
      bytes = text.size();
    }
    std::printf("| %s | %zu | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
                std::filesystem::path(dir).filename().c_str(), shards, tensors, Median(config),
                Median(headers), Median(check), Median(build), Median(verify), Median(write),
                Median(import), bytes / 1e6);
  }
  return 0;
}
