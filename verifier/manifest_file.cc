// Reading a manifest file whole: base::ReadInputFile with the parse limit.
#include "verifier/manifest_file.h"

#include "base/input_file.h"

namespace loadplan::verifier {

base::Result<std::string> ReadManifestFile(const std::string& path, size_t limit) {
  return base::ReadInputFile(path, limit, "manifest");
}

}  // namespace loadplan::verifier
