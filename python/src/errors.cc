// base::Status -> a Python exception of loadplan._errors (the classes and the mapping from
// ErrorKind live in Python, where they carry typed attributes and docstrings).
#include <string>

#include <nanobind/stl/string.h>

#include "python/src/bindings.h"

namespace loadplan::python {

void RaiseStatus(const base::Status& status, const char* during) {
  nb::object from_status = nb::module_::import_("loadplan._errors").attr("from_status");
  nb::object error =
      from_status(std::string(base::ErrorKindName(status.kind())), status.message(), during);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

}  // namespace loadplan::python
