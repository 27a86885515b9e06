// The fuzz properties, as plain functions that assert with RC_ASSERT / RC_FAIL and draw
// what else they need with RapidCheck: tests/fuzz wraps each in RC_GTEST_PROP, and
// `loadplan fuzz` runs them with rc::check. Call them only inside a RapidCheck property.
#pragma once

#include <string>

#include "verifier/manifest.h"

namespace loadplan::fuzz {

// Tags the case with the shape of `m` (derive calls: 0, 1-3, 4-7, 8+; variables or not) so
// RapidCheck prints the distribution and the number of cases that passed.
void TagShape(const verifier::Manifest& m);
// Soundness: `m` verifies with no diagnostic at all (errors or lints).
void CheckVerifiesClean(const verifier::Manifest& m);
// Soundness: the plan of `m` under drawn options (lanes, prefetch, placement, alignment,
// granularity) passes the independent plan checker and uses the verifier's derive order.
void CheckPlanIsValid(const verifier::Manifest& m);
// Soundness on bytes: the host backend replays the plan of `m` on a synthetic checkpoint (in
// a temporary directory) with no shadow failure, writes every derived carry fully, and
// peaks exactly as the memory simulator does, within the plan's predicted load peak.
void CheckHostReplay(const verifier::Manifest& m);
// Completeness: a drawn mutator (or the next that applies) breaks one rule of `m`, and the
// verifier reports its code at its pointer and no other error. Discards when none applies.
void CheckMutationIsReported(const verifier::Manifest& m);
// Round trip: parse(write(m)) == m, write(parse(write(m))) == write(m).
void CheckRoundTrip(const verifier::Manifest& m);
// Round trip of a drawn model-level mutation of `m` (broken, but parsed without a diagnostic).
void CheckMutationRoundTrip(const verifier::Manifest& m);
// Totality: CheckText(text) returns, and when `text` is JSON every reported pointer (and
// note pointer) names a value in it ("" is the root).
void CheckTextIsTotal(const std::string& text);

}  // namespace loadplan::fuzz
