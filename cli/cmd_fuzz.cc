// `loadplan fuzz`: the fuzz properties driven by RapidCheck's own runner with explicit
// test parameters (cases, seed), so RC_PARAMS still supplies everything else.
#include "cli/cmd_fuzz.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "cli/input.h"
#include "fuzz/generators.h"
#include "fuzz/mutators.h"
#include "fuzz/properties.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::cli {
namespace {

using Property = std::pair<std::string, std::function<void()>>;

std::vector<Property> GeneratedProperties() {
  using namespace fuzz;  // NOLINT
  return {
      {"soundness: generated manifests verify clean", [] { CheckVerifiesClean(*GenManifest()); }},
      {"soundness: their plans pass the plan checker", [] { CheckPlanIsValid(*GenManifest()); }},
      {"soundness: the host backend replays them", [] { CheckHostReplay(*GenManifest()); }},
      {"completeness: mutations are reported", [] { CheckMutationIsReported(*GenManifest()); }},
      {"round trip: parse(write(m)) == m", [] { CheckRoundTrip(*GenManifest()); }},
      {"round trip: mutated models", [] { CheckMutationRoundTrip(*GenManifest()); }},
      {"totality: arbitrary JSON", [] { CheckTextIsTotal(*GenJsonText()); }},
      {"totality: byte-mutated manifests", [] { CheckTextIsTotal(*GenMutatedText(verifier::WriteManifest(*GenManifest()))); }},
  };
}

std::vector<Property> AroundProperties(const std::string& text, const std::optional<verifier::Manifest>& clean) {
  using namespace fuzz;  // NOLINT
  std::vector<Property> props = {{"totality: byte mutations of the file", [text] { CheckTextIsTotal(*GenMutatedText(text)); }}};
  if (!clean) return props;
  const verifier::Manifest m = *clean;
  props.push_back({"completeness: mutations of the file are reported", [m] { CheckMutationIsReported(m); }});
  props.push_back({"soundness: its plans pass the plan checker", [m] { CheckPlanIsValid(m); }});
  props.push_back({"round trip: the file's model", [m] { CheckRoundTrip(m); }});
  return props;
}

bool RunOne(const Property& prop, const rc::detail::TestParams& params) {
  const auto start = std::chrono::steady_clock::now();
  rc::detail::TestMetadata metadata;
  metadata.id = prop.first;
  metadata.description = prop.first;
  const rc::detail::TestResult result = rc::detail::checkTestable(prop.second, metadata, params);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool ok = result.template is<rc::detail::SuccessResult>();
  std::cout << fmt::format("{}  {} ({:.1f} s)\n", ok ? "ok  " : "FAIL", prop.first, s);
  if (!ok) {
    rc::detail::printResultMessage(result, std::cout);
    std::cout << fmt::format("\nreproduce: loadplan fuzz --seed {} --cases {} (or RC_PARAMS=\"seed={}\")\n",
                             params.seed, params.maxSuccess, params.seed);
  }
  return ok;
}

}  // namespace

int RunFuzz(const FuzzCliOptions& options) {
  std::vector<Property> props;
  if (options.around) {
    const LoadedText loaded = ReadFileLimited(*options.around, size_t{256} << 20);
    if (!loaded.text) {
      std::cerr << "loadplan fuzz: " << loaded.error << "\n";
      return 2;
    }
    const verifier::CheckOutput checked = verifier::CheckText(*loaded.text);
    const bool clean = checked.manifest && checked.result.ok();
    if (!clean) std::cout << *options.around << " does not verify: fuzzing its bytes only\n";
    props = AroundProperties(*loaded.text, clean ? checked.manifest : std::nullopt);
  } else {
    props = GeneratedProperties();
  }
  // RapidCheck reads RC_PARAMS (and prints "Using configuration") on first use: with --seed,
  // let that line name the seed that runs.
  if (options.seed && std::getenv("RC_PARAMS") == nullptr) {
    setenv("RC_PARAMS", fmt::format("seed={}", *options.seed).c_str(), 0);
  }
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = options.cases.value_or(1000);
  params.seed = options.seed.value_or(params.seed != 0 ? params.seed : std::random_device{}());
  std::cout << fmt::format("loadplan fuzz: {} properties x {} cases, seed {}\n", props.size(), params.maxSuccess,
                           params.seed);
  int failed = 0;
  for (const Property& p : props) failed += RunOne(p, params) ? 0 : 1;
  std::cout << fmt::format("{} passed, {} failed\n", props.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace loadplan::cli
