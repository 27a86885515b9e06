// Internal: every mutator function (fuzz/mutate_*.cc); fuzz/mutators.cc lists them.
#pragma once

#include "fuzz/mutate_edit.h"
#include "fuzz/mutate_find.h"

namespace loadplan::fuzz::mut {

#define LOADPLAN_MUTATOR(fn) \
  std::optional<Mutation> fn(const verifier::Manifest& m, const Pick& pick)
// Kinds (mutate_kinds.cc).
LOADPLAN_MUTATOR(BindingMissing);
LOADPLAN_MUTATOR(BindingExtra);
LOADPLAN_MUTATOR(SourceWritten);
LOADPLAN_MUTATOR(SourceReadByServing);
LOADPLAN_MUTATOR(SourceExported);
LOADPLAN_MUTATOR(WeightWritten);
LOADPLAN_MUTATOR(VariableFixedShape);
LOADPLAN_MUTATOR(TensorTwice);
LOADPLAN_MUTATOR(LaneOnOtherKind);
LOADPLAN_MUTATOR(LaneOutOfRange);
LOADPLAN_MUTATOR(PartialByte);
LOADPLAN_MUTATOR(TensorAndTensors);
LOADPLAN_MUTATOR(EmptyTensors);
LOADPLAN_MUTATOR(ListedTwice);
LOADPLAN_MUTATOR(SliceOfList);
LOADPLAN_MUTATOR(SliceOutsideShape);
// Programs and calls (mutate_programs.cc).
LOADPLAN_MUTATOR(DeriveFlag);
LOADPLAN_MUTATOR(DeriveTouchesServing);
LOADPLAN_MUTATOR(DeriveCollective);
LOADPLAN_MUTATOR(DeriveScalarVariable);
LOADPLAN_MUTATOR(DeriveGridVariable);
LOADPLAN_MUTATOR(MissingScalarArg);
LOADPLAN_MUTATOR(ExtraArg);
LOADPLAN_MUTATOR(ScalarForBuffer);
LOADPLAN_MUTATOR(DtypeMismatch);
LOADPLAN_MUTATOR(ExtentUnknownName);
LOADPLAN_MUTATOR(ExtentMissing);
LOADPLAN_MUTATOR(EmptyProgram);
LOADPLAN_MUTATOR(DeriveGridZero);
// Registry kernels (mutate_registry.cc).
LOADPLAN_MUTATOR(RegistryContractChanged);
LOADPLAN_MUTATOR(RegistryPreconditionBroken);
// Dataflow and bounds (mutate_dataflow.cc).
LOADPLAN_MUTATOR(Cycle);
LOADPLAN_MUTATOR(OrphanRead);
LOADPLAN_MUTATOR(WriterLater);
LOADPLAN_MUTATOR(TwoWriters);
LOADPLAN_MUTATOR(ShortWrite);
LOADPLAN_MUTATOR(DeriveExtentTooLong);
LOADPLAN_MUTATOR(ServingExtentTooLongAtCorner);
// Structure (mutate_structure.cc).
LOADPLAN_MUTATOR(UnknownBuffer);
LOADPLAN_MUTATOR(UnknownKernel);
LOADPLAN_MUTATOR(UnknownShapeVariable);
LOADPLAN_MUTATOR(UnknownBatchVariable);
LOADPLAN_MUTATOR(UnknownCollectiveBuffer);
LOADPLAN_MUTATOR(MinAboveMax);
LOADPLAN_MUTATOR(NegativeMin);
LOADPLAN_MUTATOR(OverflowingShape);
LOADPLAN_MUTATOR(DivisionByZeroShape);
// Text (mutate_text.cc).
LOADPLAN_MUTATOR(Truncated);
LOADPLAN_MUTATOR(TooDeep);
LOADPLAN_MUTATOR(UnknownSchema);
LOADPLAN_MUTATOR(UnknownKey);
LOADPLAN_MUTATOR(WrongType);
LOADPLAN_MUTATOR(DuplicateKey);
LOADPLAN_MUTATOR(BadName);
LOADPLAN_MUTATOR(UnknownDtype);
LOADPLAN_MUTATOR(BadExpression);
LOADPLAN_MUTATOR(NumberOutOfRange);
#undef LOADPLAN_MUTATOR

}  // namespace loadplan::fuzz::mut
