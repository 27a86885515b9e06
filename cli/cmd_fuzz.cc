// `loadplan fuzz`: reads the --around file and runs the fuzz library's properties
// (fuzz::RunProperties, RapidCheck's public runner underneath).
#include "cli/cmd_fuzz.h"

#include <cstdio>
#include <iostream>

#include "cli/input.h"
#include "fuzz/run_properties.h"
#include "verifier/manifest_file.h"

namespace loadplan::cli {

int RunFuzz(const FuzzCliOptions& options) {
  fuzz::PropertyRunOptions run{.cases = options.cases.value_or(1000), .seed = options.seed};
  if (run.cases < 1) {
    std::fprintf(stderr, "loadplan fuzz: --cases %d: must be at least 1\n", run.cases);
    return 2;
  }
  if (options.around) {
    base::Result<std::string> loaded =
        verifier::ReadManifestFile(*options.around, size_t{256} << 20);
    if (!loaded.ok()) {
      std::fprintf(stderr, "loadplan fuzz: %s\n", loaded.status().message().c_str());
      return 2;
    }
    run.around = std::move(*loaded);
    run.around_name = *options.around;
  }
  const fuzz::PropertyRunResult r = fuzz::RunProperties(run, std::cout);
  return r.failed == 0 ? 0 : 1;
}

}  // namespace loadplan::cli
