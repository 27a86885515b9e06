// Mutators: each breaks exactly one rule of docs/verifier.md in a manifest that verifies
// without errors, and knows the diagnostics that must follow: {code, pointer} pairs, all of
// which must be reported, and no other error may be (warnings are allowed: removing a
// reader may leave an unread carry behind).
//
// Mutators work on any verified manifest, generated or read from a file (`loadplan fuzz
// --around FILE`): each looks for what it needs (a derive copy call, a source, a variable,
// ...) and returns nullopt when the manifest has none. Randomness comes from a Pick
// function, so RapidCheck (shrinkable) and libFuzzer (bytes) can both drive them.
// Model mutations edit the typed Manifest and write it with WriteManifest; text mutations
// (J*, S1-S5, S7, S10, S11) edit the JSON document or its bytes.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verifier/expr.h"
#include "verifier/manifest.h"

namespace loadplan::fuzz {

// Uniform choice in [0, n) for n >= 1.
using Pick = std::function<size_t(size_t n)>;

struct Expected {
  std::string code;
  std::string pointer;
  bool operator==(const Expected&) const = default;
  auto operator<=>(const Expected&) const = default;
};

struct Mutation {
  std::string mutator;                                // the mutator's name
  std::string text;                                   // the mutated document
  std::vector<Expected> expected;                     // the first is the rule the mutator breaks
  int max_boxes = verifier::ProofBudget{}.max_boxes;  // the proof budget to verify with
};

struct Mutator {
  std::string_view name;
  std::string_view code;  // the rule it breaks
  std::optional<Mutation> (*apply)(const verifier::Manifest& m, const Pick& pick);
};

// Every mutator, in a fixed order.
const std::vector<Mutator>& Mutators();

// What a check of `m.text` must show, and what it showed instead: empty when the
// reported diagnostics contain every expected one and no other error.
std::string CheckMutation(const Mutation& m);

}  // namespace loadplan::fuzz
