// The mutator table and the check that a mutation is reported as it must be.
#include "fuzz/mutators.h"

#include <set>

#include <fmt/format.h>

#include "fuzz/mutate_rules.h"
#include "verifier/verify.h"

namespace loadplan::fuzz {

const std::vector<Mutator>& Mutators() {
  using namespace mut;  // NOLINT
  static const std::vector<Mutator> kMutators = {
      {"truncated", "J1", Truncated},
      {"too-deep", "J2", TooDeep},
      {"unknown-schema", "S1", UnknownSchema},
      {"unknown-key", "S2", UnknownKey},
      {"wrong-type", "S3", WrongType},
      {"duplicate-key", "S4", DuplicateKey},
      {"bad-name", "S5", BadName},
      {"unknown-buffer", "S6", UnknownBuffer},
      {"unknown-kernel", "S6", UnknownKernel},
      {"unknown-shape-variable", "S6", UnknownShapeVariable},
      {"unknown-batch-variable", "S6", UnknownBatchVariable},
      {"unknown-collective-buffer", "S6", UnknownCollectiveBuffer},
      {"unknown-dtype", "S7", UnknownDtype},
      {"min-above-max", "S8", MinAboveMax},
      {"negative-min", "S8", NegativeMin},
      {"overflowing-shape", "S9", OverflowingShape},
      {"division-by-zero-shape", "S9", DivisionByZeroShape},
      {"bad-expression", "S10", BadExpression},
      {"number-out-of-range", "S11", NumberOutOfRange},
      {"binding-missing", "K1", BindingMissing},
      {"binding-extra", "K1", BindingExtra},
      {"source-written", "K2", SourceWritten},
      {"source-read-by-serving", "K2", SourceReadByServing},
      {"source-exported", "K3", SourceExported},
      {"weight-written", "K4", WeightWritten},
      {"variable-fixed-shape", "K5", VariableFixedShape},
      {"tensor-twice", "K6", TensorTwice},
      {"lane-on-other-kind", "K7", LaneOnOtherKind},
      {"lane-out-of-range", "K7", LaneOutOfRange},
      {"partial-byte", "K8", PartialByte},
      {"tensor-and-tensors", "K9", TensorAndTensors},
      {"empty-tensors", "K10", EmptyTensors},
      {"listed-twice", "K11", ListedTwice},
      {"slice-of-list", "K12", SliceOfList},
      {"slice-outside-shape", "K13", SliceOutsideShape},
      {"derive-flag", "P1", DeriveFlag},
      {"derive-touches-serving", "P2", DeriveTouchesServing},
      {"derive-collective", "P3", DeriveCollective},
      {"derive-scalar-variable", "P4", DeriveScalarVariable},
      {"derive-grid-variable", "P4", DeriveGridVariable},
      {"missing-scalar-arg", "P5", MissingScalarArg},
      {"extra-arg", "P5", ExtraArg},
      {"scalar-for-buffer", "P5", ScalarForBuffer},
      {"dtype-mismatch", "P6", DtypeMismatch},
      {"extent-unknown-name", "P7", ExtentUnknownName},
      {"extent-missing", "P7", ExtentMissing},
      {"empty-program", "P8", EmptyProgram},
      {"derive-grid-zero", "P8", DeriveGridZero},
      {"registry-contract-changed", "P9", RegistryContractChanged},
      {"registry-precondition-broken", "P10", RegistryPreconditionBroken},
      {"cycle", "D1", Cycle},
      {"orphan-read", "D2", OrphanRead},
      {"writer-later", "D2", WriterLater},
      {"two-writers", "D3", TwoWriters},
      {"short-write", "D4", ShortWrite},
      {"derive-extent-too-long", "B1", DeriveExtentTooLong},
      {"serving-extent-too-long-at-corner", "B1", ServingExtentTooLongAtCorner},
  };
  return kMutators;
}

std::string CheckMutation(const Mutation& m) {
  using verifier::Severity;
  const verifier::CheckOutput out =
      verifier::CheckText(m.text, verifier::VerifyOptions{.budget = {.max_boxes = m.max_boxes}});
  std::set<Expected> reported, errors;
  for (const verifier::Diagnostic& d : out.result.diags) {
    reported.insert({d.code, d.pointer});
    if (d.severity == Severity::kError) errors.insert({d.code, d.pointer});
  }
  const std::set<Expected> expected(m.expected.begin(), m.expected.end());
  std::string problems;
  for (const Expected& e : expected) {
    if (!reported.contains(e))
      problems += fmt::format("  missing {} at \"{}\"\n", e.code, e.pointer);
  }
  for (const Expected& e : errors) {
    if (!expected.contains(e))
      problems += fmt::format("  unexpected {} at \"{}\"\n", e.code, e.pointer);
  }
  if (problems.empty()) return {};
  std::string all;
  for (const verifier::Diagnostic& d : out.result.diags) {
    all +=
        fmt::format("    {}[{}] \"{}\": {}\n", d.severity == Severity::kError ? "error" : "warning",
                    d.code, d.pointer, d.message);
  }
  return fmt::format("mutation {}:\n{}  reported:\n{}", m.mutator, problems, all);
}

}  // namespace loadplan::fuzz
