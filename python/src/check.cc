// check_diagnostics(): a manifest's diagnostics as tuples python/loadplan/_check.py makes
// Diagnostic values of, straight from the verifier (no JSON text between); read_manifest().
#include <string>

#include <nanobind/stl/string.h>

#include "api/loadplan.h"
#include "python/src/bindings.h"
#include "verifier/diag.h"

namespace loadplan::python {

nb::list DiagnosticTuples(const std::vector<verifier::Diagnostic>& diags, const std::string& file) {
  nb::list out;
  for (const verifier::Diagnostic& d : diags) {
    nb::list notes;
    for (const verifier::Note& n : d.notes) notes.append(nb::make_tuple(n.pointer, n.message));
    out.append(nb::make_tuple(d.code,
                              d.severity == verifier::Severity::kError ? "error" : "warning",
                              d.pointer, d.message, d.hint, nb::tuple(notes), file));
  }
  return out;
}

namespace {

nb::list CheckDiagnostics(const std::string& text, const std::string& file) {
  verifier::CheckOutput out;
  {
    nb::gil_scoped_release unlocked;
    out = api::CheckText(text);
  }
  return DiagnosticTuples(out.result.diags, file);
}

std::string ReadManifest(const std::string& path) {
  base::Result<std::string> text = [&] {
    nb::gil_scoped_release unlocked;
    return api::ReadManifestText(path);
  }();
  if (!text.ok()) RaiseStatus(text.status(), "read");
  return std::move(*text);
}

}  // namespace

void BindCheck(nb::module_& m) {
  m.def("check_diagnostics", &CheckDiagnostics, nb::arg("text"), nb::arg("file"),
        "Verifies manifest text; returns its diagnostics as (code, severity, pointer, message, "
        "hint, notes, file) tuples, notes as (pointer, message) tuples.");
  m.def("read_manifest", &ReadManifest, nb::arg("path"),
        "A manifest file's text, read as the CLI reads it (a regular file within the parser's "
        "limit; a FIFO or device refused at once).");
}

}  // namespace loadplan::python
