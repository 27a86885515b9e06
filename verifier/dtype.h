// safetensors dtypes for the manifest model: the vocabulary lives in base/dtype.h.
#pragma once

#include "base/dtype.h"

namespace loadplan::verifier {

using base::AllDtypeNames;
using base::Dtype;
using base::DtypeBits;
using base::DtypeName;
using base::FillsWholeBytes;
using base::ParseDtype;

}  // namespace loadplan::verifier
