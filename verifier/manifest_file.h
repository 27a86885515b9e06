// Reading a manifest file: the text whole, with a size limit checked before reading.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace loadplan::verifier {

// Reads a whole file, refusing files over `limit` bytes before reading them. Errors (kIo):
// "cannot open x.json: No such file or directory", "x.json is N bytes, over the L byte ...".
[[nodiscard]] base::Result<std::string> ReadManifestFile(const std::string& path, size_t limit);

}  // namespace loadplan::verifier
