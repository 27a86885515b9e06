// Parsing a deployment file (docs/deploy.md): an object of a name, stages and a default device.
#include "simulator/deploy/deployment.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "simulator/phases/phases.h"
#include "verifier/parse.h"

namespace loadplan::simulator {
namespace {

using nlohmann::json;

void Error(std::vector<verifier::Diagnostic>& diags, std::string ptr, std::string message,
           std::string hint = {}) {
  diags.push_back({.code = std::string(deploy_codes::kStructure),
                   .pointer = std::move(ptr),
                   .message = std::move(message),
                   .hint = std::move(hint)});
}

// Unknown keys are errors (with a did-you-mean), as in manifests.
void CheckKeys(const json& obj, const std::string& ptr, const std::vector<std::string>& known,
               std::vector<verifier::Diagnostic>& diags) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string near = verifier::DidYouMean(key, known);
    Error(diags, verifier::ChildPointer(ptr, key), fmt::format("unknown key \"{}\"", key),
          near.empty() ? "" : fmt::format("did you mean \"{}\"?", near));
  }
}

// A device_memory value: a string that is a size or a preset.
std::optional<std::string> DeviceMemoryAt(const json& obj, const std::string& ptr,
                                          std::vector<verifier::Diagnostic>& diags) {
  const auto it = obj.find("device_memory");
  if (it == obj.end()) return std::nullopt;
  const std::string at = verifier::ChildPointer(ptr, "device_memory");
  if (!it->is_string()) {
    Error(diags, at, "device_memory must be a string (\"288GB\", \"141GiB\", \"h200\")");
    return std::nullopt;
  }
  const std::string text = it->get<std::string>();
  if (!ResolveDeviceMemory(text)) {
    Error(diags, at,
          fmt::format("device_memory \"{}\" is not a size (\"139.8GiB\", \"288GB\", bytes) or a "
                      "preset ({})",
                      text, PresetNames()));
    return std::nullopt;
  }
  return text;
}

std::optional<DeploymentStage> StageAt(const json& s, const std::string& ptr,
                                       const std::filesystem::path& dir,
                                       std::vector<verifier::Diagnostic>& diags) {
  if (!s.is_object()) {
    Error(diags, ptr, "a stage must be an object {\"manifest\": PATH}");
    return std::nullopt;
  }
  CheckKeys(s, ptr, {"manifest", "device_memory"}, diags);
  DeploymentStage stage{.ptr = ptr};
  const auto m = s.find("manifest");
  if (m == s.end() || !m->is_string() || m->get<std::string>().empty()) {
    Error(diags, verifier::ChildPointer(ptr, "manifest"),
          "a stage needs \"manifest\": the path of its manifest (a non-empty string)");
    return std::nullopt;
  }
  stage.manifest = m->get<std::string>();
  const std::filesystem::path p(stage.manifest);
  stage.path = p.is_absolute() ? p.string() : (dir / p).lexically_normal().string();
  const size_t before = diags.size();
  stage.device_memory = DeviceMemoryAt(s, ptr, diags);
  if (diags.size() != before) return std::nullopt;
  return stage;
}

}  // namespace

bool LooksLikeDeployment(std::string_view text) {
  // `plan` asks this of every file: a manifest without the word is not parsed twice.
  if (text.find("\"stages\"") == std::string_view::npos) return false;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("stages");
}

// The text as JSON, each object's repeated keys named (nlohmann keeps the last silently; the
// manifest parser reports them as S4, a deployment as X1), and nesting past the manifest
// parser's depth limit refused. Discarded when not JSON or too deep.
json ParseStrict(std::string_view text, std::vector<std::string>& repeated, bool& too_deep) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  const int max_depth = verifier::ParseLimits{}.max_depth;
  const json::parser_callback_t seen = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth) too_deep = true;
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second) {
      repeated.push_back(parsed.get<std::string>());
    }
    return !too_deep;
  };
  return json::parse(text, seen, /*allow_exceptions=*/false);
}

namespace {

// The document as one JSON object, or null after its diagnostics (too deep, not JSON, a key
// twice, not an object).
std::optional<json> DocumentOf(std::string_view text, std::vector<verifier::Diagnostic>& diags) {
  std::vector<std::string> repeated;
  bool too_deep = false;
  json j = ParseStrict(text, repeated, too_deep);
  if (too_deep) {
    Error(diags, "",
          fmt::format("the deployment file nests deeper than {} levels",
                      verifier::ParseLimits{}.max_depth));
    return std::nullopt;
  }
  if (j.is_discarded()) {
    Error(diags, "", "the deployment file is not JSON");
    return std::nullopt;
  }
  for (const std::string& k : repeated) {
    Error(diags, "", fmt::format("key \"{}\" appears twice in one object; keep one", k));
  }
  if (!j.is_object()) {
    Error(diags, "", "a deployment is a JSON object {\"deployment\": NAME, \"stages\": [...]}");
    return std::nullopt;
  }
  return j;
}

// "tensor_parallel": T, the stages a whole number of tensor-parallel groups of T (P x T ranks in
// rank order: pipeline stage p's rank t is stage p T + t).
void TensorParallelAt(const json& j, size_t stages, Deployment& d,
                      std::vector<verifier::Diagnostic>& diags) {
  const auto tp = j.find("tensor_parallel");
  if (tp == j.end()) return;
  if (!tp->is_number_unsigned() || tp->get<uint64_t>() < 1 || tp->get<uint64_t>() > 4096) {
    Error(diags, "/tensor_parallel", "\"tensor_parallel\" must be an integer in [1, 4096]");
  } else if (stages % tp->get<uint64_t>() != 0) {
    Error(diags, "/tensor_parallel",
          fmt::format("\"tensor_parallel\": {} needs whole groups of {} ranks (P x {}), {} "
                      "given",
                      tp->get<uint64_t>(), tp->get<uint64_t>(), tp->get<uint64_t>(), stages));
  } else {
    d.tensor_parallel = static_cast<int64_t>(tp->get<uint64_t>());
  }
}

}  // namespace

DeploymentParse ParseDeployment(std::string_view text, std::string_view path) {
  DeploymentParse out;
  const std::optional<json> doc = DocumentOf(text, out.diags);
  if (!doc) return out;
  const json& j = *doc;
  CheckKeys(j, "", {"deployment", "stages", "device_memory", "tensor_parallel"}, out.diags);
  Deployment d;
  if (const auto n = j.find("deployment"); n == j.end() || !n->is_string()) {
    Error(out.diags, "/deployment", "a deployment needs \"deployment\": its name (a string)");
  } else {
    d.name = n->get<std::string>();
  }
  d.device_memory = DeviceMemoryAt(j, "", out.diags);
  const auto stages = j.find("stages");
  if (stages == j.end() || !stages->is_array() || stages->empty()) {
    Error(out.diags, "/stages", "\"stages\" must be a non-empty array of stages");
    return out;
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (size_t k = 0; k < stages->size(); ++k) {
    std::optional<DeploymentStage> s =
        StageAt((*stages)[k], verifier::ChildPointer("/stages", k), dir, out.diags);
    if (s) d.stages.push_back(std::move(*s));
  }
  TensorParallelAt(j, stages->size(), d, out.diags);
  if (out.diags.empty()) out.deployment = std::move(d);
  return out;
}

}  // namespace loadplan::simulator
