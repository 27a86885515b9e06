// Mutators that edit the JSON document or its bytes: J1, J2 and the parse-time rules
// S1-S5, S7, S10, S11.
#include <nlohmann/json.hpp>

#include "fuzz/mutate_rules.h"
#include "verifier/writer.h"

namespace loadplan::fuzz::mut {

using namespace verifier;  // NOLINT
using nlohmann::json;

namespace {

json Doc(const Manifest& m) { return json::parse(WriteManifest(m)); }

// Pointers (escaped) to every object member of `doc` under `section`: /buffers/<b>, ...
std::vector<std::string> Members(const json& doc, std::string_view section) {
  std::vector<std::string> out;
  if (!doc.contains(section)) return out;
  for (const auto& [key, value] : doc.at(std::string(section)).items())
    out.push_back(Ptr({section, key}));
  return out;
}

// `doc` as text with the member `key` of the object at `where` written twice.
std::string DumpWithDuplicate(const json& doc, const std::string& at, const std::string& where,
                              const std::string& key) {
  if (!doc.is_object()) return doc.dump();
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : doc.items()) {
    const std::string child = ChildPointer(at, k);
    const std::string text = json(k).dump() + ": " + DumpWithDuplicate(v, child, where, key);
    out += (first ? "" : ", ") + text;
    if (at == where && k == key) out += ", " + text;
    first = false;
  }
  return out + "}";
}

std::vector<std::string> Dims(const json& doc) {
  std::vector<std::string> out;
  for (const std::string& b : Members(doc, "buffers")) {
    const json& shape = doc.at(json::json_pointer(b)).at("shape");
    for (size_t i = 0; i < shape.size(); ++i) out.push_back(b + "/shape/" + std::to_string(i));
  }
  return out;
}

}  // namespace

std::optional<Mutation> Truncated(const Manifest& m, const Pick& pick) {
  std::string text = WriteManifest(m);
  text.resize(pick(text.rfind('}')));
  return FinishText("truncated", text, {{"J1", ""}});
}

std::optional<Mutation> TooDeep(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  json deep = json::array();
  const size_t depth = 64 + pick(64);
  for (size_t i = 0; i < depth; ++i) deep = json::array({deep});
  doc["name"] = deep;
  return FinishText("too-deep", doc.dump(), {{"J2", ""}});
}

std::optional<Mutation> UnknownSchema(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  doc["schema"] = pick(2) == 0 ? verifier::kSchemaVersion + 1 : 0;
  return FinishText("unknown-schema", doc.dump(2), {{"S1", "/schema"}});
}

// An extra key in the root, a variable, a buffer, a kernel, a program or a call.
std::optional<Mutation> UnknownKey(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  std::vector<std::string> objects = {""};
  for (const char* s : {"vars", "buffers", "kernels", "programs"}) {
    for (std::string& p : Members(doc, s)) objects.push_back(std::move(p));
  }
  for (const std::string& p : Members(doc, "programs")) {
    const json& calls = doc.at(json::json_pointer(p)).at("calls");
    for (size_t i = 0; i < calls.size(); ++i) objects.push_back(p + "/calls/" + std::to_string(i));
  }
  const std::string at = Choose(objects, pick);
  const std::string key = std::vector<std::string>{"exprot", "shpe", "~x", "a/b", "Kind"}[pick(5)];
  doc[json::json_pointer(at)][key] = true;
  return FinishText("unknown-key", doc.dump(1), {{"S2", ChildPointer(at, key)}});
}

// A buffer flag of the wrong JSON type.
std::optional<Mutation> WrongType(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  auto buffers = Members(doc, "buffers");
  if (buffers.empty()) return std::nullopt;
  const std::string b = Choose(buffers, pick);
  doc[json::json_pointer(b)]["export"] =
      std::vector<json>{"yes", 1, nullptr, json::array()}[pick(4)];
  return FinishText("wrong-type", doc.dump(), {{"S3", b + "/export"}});
}

std::optional<Mutation> DuplicateKey(const Manifest& m, const Pick& pick) {
  const json doc = Doc(m);
  std::vector<std::string> members;
  for (const char* s : {"vars", "buffers", "kernels", "programs"}) {
    for (std::string& p : Members(doc, s)) members.push_back(std::move(p));
  }
  members.push_back("/name");
  const std::string p = Choose(members, pick);
  const size_t slash = p.rfind('/');
  const std::string where = p.substr(0, slash);
  const std::string key = json::json_pointer(p).back();
  return FinishText("duplicate-key", DumpWithDuplicate(doc, "", where, key), {{"S4", p}});
}

std::optional<Mutation> BadName(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  const std::string name = std::vector<std::string>{"", "2n", "a b", "x-y"}[pick(4)];
  if (m.FindVar(name) != nullptr) return std::nullopt;
  doc["vars"][name] = {{"min", 0}, {"max", 1}};
  return FinishText("bad-name", doc.dump(), {{"S5", Ptr({"vars", name})}});
}

std::optional<Mutation> UnknownDtype(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  auto buffers = Members(doc, "buffers");
  if (buffers.empty()) return std::nullopt;
  const std::string b = Choose(buffers, pick);
  doc[json::json_pointer(b)]["dtype"] =
      std::vector<std::string>{"bf16", "u8", "F8", "", "FP32"}[pick(5)];
  return FinishText("unknown-dtype", doc.dump(), {{"S7", b + "/dtype"}});
}

std::optional<Mutation> BadExpression(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  auto dims = Dims(doc);
  if (dims.empty()) return std::nullopt;
  const std::string d = Choose(dims, pick);
  doc[json::json_pointer(d)] =
      std::vector<std::string>{"b*", "(", "min(1)", "1 +", "3 $ 4"}[pick(5)];
  return FinishText("bad-expression", doc.dump(), {{"S10", d}});
}

std::optional<Mutation> NumberOutOfRange(const Manifest& m, const Pick& pick) {
  json doc = Doc(m);
  auto dims = Dims(doc);
  // lanes 0 is S11 alone: pinned lanes are not range-checked against a lanes that failed.
  if (dims.empty() || pick(3) == 0) {
    doc["load"]["lanes"] = 0;
    return FinishText("number-out-of-range", doc.dump(), {{"S11", "/load/lanes"}});
  }
  const std::string d = Choose(dims, pick);
  doc[json::json_pointer(d)] = std::vector<json>{-1, 1.5, 18446744073709551615ull}[pick(3)];
  return FinishText("number-out-of-range", doc.dump(), {{"S11", d}});
}

}  // namespace loadplan::fuzz::mut
