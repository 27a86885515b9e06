// base::Status -> a Python exception of loadplan._errors (the classes and the mapping from
// ErrorKind live in Python, where they carry typed attributes and docstrings).
#include <string>

#include <nanobind/stl/string.h>

#include "python/src/bindings.h"

namespace loadplan::python {

void RaiseStatus(const base::Status& status, const char* during) {
  nb::object from_status = nb::module_::import_("loadplan._errors").attr("from_status");
  nb::object requested = nb::none(), free = nb::none();  // the typed figures, when carried
  if (const std::optional<base::ErrorBytes>& b = status.bytes()) {
    requested = nb::int_(b->requested);
    if (b->free) free = nb::int_(*b->free);
  }
  nb::object path = nb::none(), error_number = nb::none();  // the file, when carried
  if (const std::optional<base::ErrorFile>& f = status.file()) {
    path = nb::str(f->path.c_str());
    error_number = nb::int_(f->error_number);
  }
  nb::object tensor = nb::none(), offset = nb::none();  // where in the input, when carried
  if (const std::optional<base::ErrorPlace>& at = status.place()) {
    tensor = nb::str(at->name.c_str());
    offset = nb::int_(at->offset);
  }
  nb::list problems;  // an all-at-once check's problems, one entry each (base::StatusLines)
  for (const std::string& p : status.problems()) problems.append(nb::str(p.c_str()));
  nb::object error = from_status(std::string(base::ErrorKindName(status.kind())), status.message(),
                                 during, requested, free, path, error_number, tensor, offset);
  error.attr("problems") = problems;
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

}  // namespace loadplan::python
