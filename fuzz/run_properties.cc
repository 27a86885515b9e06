// RunProperties: the fuzz properties through rc::check, with cases and seed passed in RC_PARAMS.
#include "fuzz/run_properties.h"

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <rapidcheck.h>

#include "base/seconds.h"
#include "fuzz/generators.h"
#include "fuzz/mutators.h"
#include "fuzz/properties.h"
#include "verifier/verify.h"
#include "verifier/writer.h"

namespace loadplan::fuzz {
namespace {

using Property = std::pair<std::string, std::function<void()>>;

std::vector<Property> GeneratedProperties() {
  return {
      {"soundness: generated manifests verify clean", [] { CheckVerifiesClean(*GenManifest()); }},
      {"soundness: their plans pass the plan checker", [] { CheckPlanIsValid(*GenManifest()); }},
      {"soundness: the host backend replays them", [] { CheckHostReplay(*GenManifest()); }},
      {"completeness: mutations are reported", [] { CheckMutationIsReported(*GenManifest()); }},
      {"round trip: parse(write(m)) == m", [] { CheckRoundTrip(*GenManifest()); }},
      {"round trip: mutated models", [] { CheckMutationRoundTrip(*GenManifest()); }},
      {"totality: arbitrary JSON", [] { CheckTextIsTotal(*GenJsonText()); }},
      {"totality: byte-mutated manifests",
       [] { CheckTextIsTotal(*GenMutatedText(verifier::WriteManifest(*GenManifest()))); }},
  };
}

std::vector<Property> AroundProperties(const std::string& text,
                                       const std::optional<verifier::Manifest>& clean) {
  std::vector<Property> props = {{"totality: byte mutations of the file",
                                  [text] { CheckTextIsTotal(*GenMutatedText(text)); }}};
  if (!clean) return props;
  const verifier::Manifest m = *clean;
  props.push_back(
      {"completeness: mutations of the file are reported", [m] { CheckMutationIsReported(m); }});
  props.push_back({"soundness: its plans pass the plan checker", [m] { CheckPlanIsValid(m); }});
  props.push_back({"round trip: the file's model", [m] { CheckRoundTrip(m); }});
  return props;
}

// RC_PARAMS without the keys we set, then ours: "max_success=N seed=S" plus the user's others.
uint64_t ConfigureRapidCheck(const PropertyRunOptions& o) {
  const char* env = std::getenv("RC_PARAMS");
  std::istringstream in(env == nullptr ? "" : env);
  std::string kept, token;
  std::optional<uint64_t> env_seed;
  while (in >> token) {
    if (token.rfind("seed=", 0) == 0) {
      env_seed = std::strtoull(token.c_str() + 5, nullptr, 10);
    } else if (token.rfind("max_success=", 0) != 0) {
      kept += token + " ";
    }
  }
  const uint64_t seed = o.seed.value_or(env_seed.value_or(std::random_device{}()));
  setenv("RC_PARAMS", fmt::format("{}max_success={} seed={}", kept, o.cases, seed).c_str(), 1);
  return seed;
}

// One property through rc::check; its report (stderr) is kept and shown only on failure.
bool RunOne(const Property& prop, const PropertyRunOptions& o, uint64_t seed, std::ostream& out) {
  std::ostringstream report;
  std::streambuf* saved = std::cerr.rdbuf(report.rdbuf());
  const auto start = std::chrono::steady_clock::now();
  const bool ok = rc::check(prop.first, prop.second);
  const double s = base::SecondsSince(start);
  std::cerr.rdbuf(saved);
  fmt::print(out, "{}  {} ({:.1f} s)\n", ok ? "ok  " : "FAIL", prop.first, s);
  if (!ok) {
    out << report.str();
    fmt::print(out, "\nreproduce: loadplan fuzz --seed {} --cases {} (or RC_PARAMS=\"seed={}\")\n",
               seed, o.cases, seed);
  }
  return ok;
}

}  // namespace

PropertyRunResult RunProperties(const PropertyRunOptions& o, std::ostream& out) {
  PropertyRunResult result;
  std::vector<Property> props;
  if (o.around) {
    const verifier::CheckOutput checked = verifier::CheckText(*o.around);
    result.around_verifies = checked.manifest && checked.result.ok();
    props = AroundProperties(*o.around, result.around_verifies
                                            ? std::optional<verifier::Manifest>(*checked.manifest)
                                            : std::nullopt);
  } else {
    props = GeneratedProperties();
  }
  if (o.around && !result.around_verifies)
    fmt::print(out, "{} does not verify: fuzzing its bytes only\n", o.around_name);
  result.seed = ConfigureRapidCheck(o);
  fmt::print(out, "loadplan fuzz: {} properties x {} cases, seed {}\n", props.size(), o.cases,
             result.seed);
  for (const Property& p : props)
    (RunOne(p, o, result.seed, out) ? result.passed : result.failed)++;
  fmt::print(out, "{} passed, {} failed\n", result.passed, result.failed);
  return result;
}

}  // namespace loadplan::fuzz
