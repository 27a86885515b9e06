// The compiled part of the Python package `loadplan` (python/loadplan/ wraps it). Importing it
// makes no CUDA call: the stub generator and machines without a GPU import it too.
#include "python/src/bindings.h"

NB_MODULE(_loadplan, m) {
  m.doc() = "loadplan's compiled core; use the `loadplan` package, which wraps it.";
  loadplan::python::BindCheck(m);
  loadplan::python::BindPlan(m);
  loadplan::python::BindModel(m);
  loadplan::python::BindLoad(m);
  loadplan::python::BindImport(m);
}
