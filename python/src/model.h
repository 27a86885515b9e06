// The Python-side holder of a loaded model (model.cc binds it as loadplan._loadplan.Model).
#pragma once

#include "api/loadplan.h"

namespace loadplan::python {

// Owns the device memory through api::LoadedModel: every tensor handed to Python keeps this
// object alive (it is the DLPack owner), so the pool is freed only when the Model and every
// tensor taken from it are gone.
struct PyModel {
  api::LoadedModel model;
};

}  // namespace loadplan::python
