// check_json(): a manifest's diagnostics, as the JSON `loadplan check --format json` prints
// for one file (python/loadplan/_check.py turns it into Diagnostic values).
#include <string>

#include <nanobind/stl/string.h>

#include "api/loadplan.h"
#include "python/src/bindings.h"
#include "verifier/diag.h"

namespace loadplan::python {
namespace {

std::string CheckJson(const std::string& text, const std::string& file) {
  const verifier::CheckOutput out = api::CheckText(text);
  return verifier::FormatJson(out.result.diags, file);
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
  m.def("check_json", &CheckJson, nb::arg("text"), nb::arg("file"),
        nb::call_guard<nb::gil_scoped_release>(),
        "Verifies manifest text; returns its diagnostics as a JSON array (the CLI's format).");
  m.def("read_manifest", &ReadManifest, nb::arg("path"),
        "A manifest file's text, read as the CLI reads it (a regular file within the parser's "
        "limit; a FIFO or device refused at once).");
}

}  // namespace loadplan::python
