// The parts of the module loadplan._loadplan, one Bind function per file (module.cc calls
// them), and the one place a base::Status becomes a Python exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nanobind/nanobind.h>

#include "base/status.h"
#include "simulator/planner/planner.h"
#include "verifier/diag.h"

namespace loadplan::python {

namespace nb = nanobind;

void BindCheck(nb::module_& m);   // check.cc
void BindPlan(nb::module_& m);    // plan.cc
void BindModel(nb::module_& m);   // model.cc
void BindLoad(nb::module_& m);    // load.cc
void BindImport(nb::module_& m);  // import.cc

// The planner's options from the Python keywords plan() and load() share (plan.cc); an unknown
// placement policy is a kInvalidInput error.
base::Result<simulator::PlanOptions> PlanOptionsOf(std::optional<int64_t> lanes,
                                                   std::optional<int64_t> prefetch,
                                                   const std::string& placement, bool naive);

// A manifest's diagnostics as the tuples loadplan._check makes Diagnostic values of (check.cc):
// (code, severity, pointer, message, hint, ((pointer, message), ...), file). Needs the GIL.
nb::list DiagnosticTuples(const std::vector<verifier::Diagnostic>& diags, const std::string& file);

// Raises the exception loadplan._errors.from_status(kind, message, during) builds for `status`
// (ManifestError, CheckpointError, DeviceError, OutOfMemoryError, ...). Needs the GIL.
[[noreturn]] void RaiseStatus(const base::Status& status, const char* during);

}  // namespace loadplan::python
