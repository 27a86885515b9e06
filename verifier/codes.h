// The rule catalogue: every diagnostic code loadplan emits (docs/verifier.md has
// one entry per code with a bad and a good example). Codes are stable.
#pragma once

#include <string_view>

namespace loadplan::verifier::codes {

// Input: the text is not a manifest document at all (exit code 2).
inline constexpr std::string_view kJsonSyntax = "J1";  // not JSON (syntax, encoding, truncation)
inline constexpr std::string_view kJsonLimits = "J2";  // over the size or nesting-depth limit
inline constexpr std::string_view kUnreadable =
    "J3";  // the file cannot be read (reported by the commands, not the parser)

// Structure.
inline constexpr std::string_view kSchema = "S1";      // schema missing or unknown version
inline constexpr std::string_view kUnknownKey = "S2";  // unknown key (did-you-mean)
inline constexpr std::string_view kType = "S3";  // missing required key or wrong JSON type / value
inline constexpr std::string_view kDuplicateKey = "S4";  // duplicate object key
inline constexpr std::string_view kName = "S5";          // empty or invalid name
inline constexpr std::string_view kUnresolved =
    "S6";  // reference to an undeclared buffer/kernel/variable/program
inline constexpr std::string_view kDtype = "S7";     // unknown dtype
inline constexpr std::string_view kVarRange = "S8";  // variable min > max, or negative
inline constexpr std::string_view kOverflow =
    "S9";  // a size overflows 64 bits (or divides by zero) at some admissible value
inline constexpr std::string_view kExprSyntax =
    "S10";  // expression does not parse, or names something that is not a variable
inline constexpr std::string_view kNumber =
    "S11";  // number out of range (not an int64 / not a valid count)

// Kinds.
inline constexpr std::string_view kTensorBinding =
    "K1";  // weight/source without `tensor`/`tensors`, or another kind with one
inline constexpr std::string_view kSourceUse =
    "K2";  // source written, or read by a non-derive program
inline constexpr std::string_view kSourceExport = "K3";   // source exported
inline constexpr std::string_view kWeightWritten = "K4";  // weight written by a program
inline constexpr std::string_view kFixedShape =
    "K5";  // weight/source/derive-written carry with a variable shape
inline constexpr std::string_view kTensorTwice =
    "K6";  // two buffers bind the same checkpoint tensor (`tensor` or a `tensors` item)
inline constexpr std::string_view kLane =
    "K7";  // `lane` on a non-checkpoint buffer or >= load.lanes
inline constexpr std::string_view kWholeBytes =
    "K8";  // checkpoint tensor of a sub-byte dtype, bits not a multiple of 8
inline constexpr std::string_view kTensorAndTensors =
    "K9";  // a buffer has both `tensor` and `tensors`
inline constexpr std::string_view kEmptyTensors = "K10";  // `tensors` is an empty list
inline constexpr std::string_view kListedTwice =
    "K11";  // one buffer's `tensors` lists a checkpoint tensor twice
inline constexpr std::string_view kSliceBinding =
    "K12";  // `slice` not on a weight or source bound by one `tensor`
inline constexpr std::string_view kSliceShape =
    "K13";  // slice dimension outside the buffer's shape or the tensor's extent, or its length not
            // the buffer's extent
inline constexpr std::string_view kSliceBytes =
    "K14";  // slice of a sub-byte dtype off whole bytes, or splitting an MXFP4 block
inline constexpr std::string_view kSliceSchema = "K15";  // `slice` in a schema-1 manifest

// Programs and calls.
inline constexpr std::string_view kDeriveFlags = "P1";  // derive combined with once, batch or graph
inline constexpr std::string_view kDeriveTouches =
    "P2";  // derive call touches state/scratch/input/output/peer
inline constexpr std::string_view kDeriveCollective = "P3";  // derive program runs a collective
inline constexpr std::string_view kDeriveVariable =
    "P4";  // derive scalar/extent/grid depends on a variable (finding 1)
inline constexpr std::string_view kArgs =
    "P5";  // missing/extra argument, buffer for a scalar or scalar for a buffer
inline constexpr std::string_view kArgDtype =
    "P6";  // bound buffer's dtype differs from the parameter's
inline constexpr std::string_view kKernelDecl =
    "P7";  // kernel extent names a non-scalar param / buffer param without extent
inline constexpr std::string_view kEmptyProgram =
    "P8";  // program with no calls / derive program with a grid of 0
inline constexpr std::string_view kRegistryContract =
    "P9";  // kernel declared differently from the registry kernel of that name
inline constexpr std::string_view kPrecondition =
    "P10";  // call breaks a precondition of a registry kernel

// Dataflow.
inline constexpr std::string_view kCycle = "D1";  // cycle among derive programs
inline constexpr std::string_view kOrphanRead =
    "D2";  // derive read of a carry with no earlier derive producer (finding 2)
inline constexpr std::string_view kTwoWriters = "D3";  // carry written by more than one derive call
inline constexpr std::string_view kUncovered =
    "D4";  // derive-written carry not fully covered by its writes
inline constexpr std::string_view kReadPastWritten =
    "D5";  // derive read beyond the prefix its producer wrote

// Bounds.
inline constexpr std::string_view kExtent =
    "B1";  // extent exceeds the bound buffer (witness given)
inline constexpr std::string_view kUnproved =
    "B2";  // bounds proof ran out of budget: unknown is an error

// Lints (warnings).
inline constexpr std::string_view kWeightOnlyDerive =
    "L1";  // weight read only by derive programs: declare it a source (finding 3)
inline constexpr std::string_view kSourceUnread = "L2";  // source no derive program reads
inline constexpr std::string_view kCarryUnread = "L3";   // carry nothing reads

}  // namespace loadplan::verifier::codes
