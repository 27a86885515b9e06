// The example registry and the generator that writes examples/<name>.json.
#include "examples/examples.h"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "verifier/writer.h"

namespace loadplan::examples {

std::vector<std::string> ExampleNames() { return {"gpt-oss-120b", "k3-stage", "tiny"}; }

verifier::BuildResult BuildExample(std::string_view name) {
  if (name == "gpt-oss-120b") return GptOss();
  if (name == "k3-stage") return K3Stage();
  if (name == "tiny") return Tiny();
  return {.errors = {fmt::format("unknown example `{}`", name)}};
}

bool ExampleHasLayers(std::string_view name) {
  return name == "gpt-oss-120b" || name == "k3-stage";
}

verifier::BuildResult BuildExample(std::string_view name, std::optional<int> layers) {
  if (!layers) return BuildExample(name);
  if (!ExampleHasLayers(name))
    return {.errors = {fmt::format("example `{}` has no layer count", name)}};
  const std::string sized = fmt::format("{}-{}l", name, *layers);
  if (name == "gpt-oss-120b") return GptOss({.name = sized, .layers = *layers});
  return K3Stage({.name = sized, .layers = *layers});
}

std::string ExampleText(std::string_view name) {
  verifier::BuildResult r = BuildExample(name);
  return r.ok() ? verifier::WriteManifest(r.manifest) : std::string();
}

int RegenerateExamples(const std::string& dir) {
  int code = 0;
  for (const auto& name : ExampleNames()) {
    verifier::BuildResult r = BuildExample(name);
    for (const auto& e : r.errors)
      std::fprintf(stderr, "example %s: %s\n", name.c_str(), e.c_str());
    if (!r.ok()) {
      code = 1;
      continue;
    }
    const std::string path = fmt::format("{}/{}.json", dir, name);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << verifier::WriteManifest(r.manifest);
    out.close();
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      code = 1;
    }
  }
  return code;
}

}  // namespace loadplan::examples
