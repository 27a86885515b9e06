// Arbitrary JSON values and byte-mutated texts for the totality properties.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <rapidcheck.h>

#include "fuzz/gen_draft.h"
#include "fuzz/generators.h"

namespace loadplan::fuzz {
namespace {

using nlohmann::json;

const std::vector<std::string> kKeys = {
    "schema", "name",   "vars",       "load",     "buffers", "kernels", "programs",
    "min",    "max",    "lanes",      "prefetch", "kind",    "dtype",   "shape",
    "tensor", "export", "lane",       "encoding", "params",  "access",  "extent",
    "derive", "once",   "graph",      "batch",    "calls",   "kernel",  "args",
    "grid",   "block",  "collective", "buffer",   "src",     "dst",     "n",
    "w",      "w.raw",  "a/b",        "~",        "",        "exprot",  "tensors"};
const std::vector<std::string> kStrings = {"",
                                           "batch",
                                           "b",
                                           "U8",
                                           "BF16",
                                           "F32",
                                           "F4",
                                           "bf16",
                                           "copy",
                                           "cast_bf16_f32",
                                           "weight",
                                           "source",
                                           "carry",
                                           "state",
                                           "read",
                                           "write",
                                           "readwrite",
                                           "scalar",
                                           "all_reduce",
                                           "a/b",
                                           "~",
                                           "~1",
                                           std::string("\0x", 2),
                                           "batch*",
                                           "min(",
                                           "ceil_div(b, 0)",
                                           "4294967296 * 4294967296",
                                           "-1",
                                           "1e3",
                                           "b / (b - 1)",
                                           "w.raw",
                                           "e8m0"};

json DrawNumber() {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(),
                    kMax = std::numeric_limits<int64_t>::max();
  switch (detail::Roll(4)) {
    case 0:
      return *rc::gen::element<int64_t>(0, 1, -1, 2, 16, kMax, kMin, int64_t{1} << 32,
                                        int64_t{1} << 62);
    case 1: return std::numeric_limits<uint64_t>::max();
    case 2: return *rc::gen::element<double>(0.5, -0.0, 1e300, 1.0, 2.5e-8);
    default: return *rc::gen::inRange<int64_t>(-3, 300);
  }
}

json DrawJson(int depth) {
  const int kind = detail::Roll(depth >= 5 ? 5 : 8);
  switch (kind) {
    case 0: return nullptr;
    case 1: return *rc::gen::arbitrary<bool>();
    case 2: return DrawNumber();
    case 3: return *rc::gen::elementOf(kStrings);
    case 4: return *rc::gen::arbitrary<std::string>();
    case 5: {
      json a = json::array();
      const int n = *rc::gen::inRange(0, 4);
      for (int i = 0; i < n; ++i) a.push_back(DrawJson(depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      const int n = *rc::gen::inRange(0, 5);
      for (int i = 0; i < n; ++i) o[*rc::gen::elementOf(kKeys)] = DrawJson(depth + 1);
      return o;
    }
  }
}

void Edit(std::string& s) {
  static const std::vector<std::string> kTokens = {"{",
                                                   "}",
                                                   "[",
                                                   "]",
                                                   "\"",
                                                   ":",
                                                   ",",
                                                   "-1",
                                                   "0",
                                                   "1e999",
                                                   "18446744073709551616",
                                                   "\\u0000",
                                                   "\\ud800",
                                                   "null",
                                                   "true",
                                                   "\"schema\": 1",
                                                   "\"w\": {}",
                                                   "\xff",
                                                   "\xc3",
                                                   "\"batch\"",
                                                   " ",
                                                   "\n"};
  const size_t pos = s.empty() ? 0 : *rc::gen::inRange<size_t>(0, s.size() + 1);
  const size_t len = *rc::gen::inRange<size_t>(1, 17);
  switch (detail::Roll(5)) {
    case 0:
      if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ (1 << *rc::gen::inRange(0, 8)));
      break;
    case 1: s.erase(std::min(pos, s.size()), len); break;
    case 2: s.insert(std::min(pos, s.size()), *rc::gen::elementOf(kTokens)); break;
    case 3: s.insert(std::min(pos, s.size()), s.substr(std::min(pos, s.size()), len)); break;
    default:
      if (detail::Roll(4) == 0) s.resize(std::min(pos, s.size()));
      break;
  }
}

}  // namespace

rc::Gen<nlohmann::json> GenJson() {
  return rc::gen::exec([] {
    if (detail::Roll(3) != 0) return DrawJson(0);
    json doc = json::object();  // manifest-shaped at the top, anything below
    doc["schema"] = *rc::gen::weightedElement<json>({{4, json(1)}, {1, DrawJson(3)}});
    for (const char* key : {"name", "vars", "load", "buffers", "kernels", "programs"}) {
      if (detail::Roll(3) != 0) doc[key] = DrawJson(1);
    }
    return doc;
  });
}

rc::Gen<std::string> GenJsonText() {
  return rc::gen::map(GenJson(), [](const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  });
}

rc::Gen<std::string> GenMutatedText(std::string base) {
  return rc::gen::exec([base] {
    std::string s = base;
    const int edits =
        *rc::gen::weightedElement<int>({{6, 1}, {3, 2}, {2, *rc::gen::inRange(3, 9)}});
    for (int i = 0; i < edits; ++i) Edit(s);
    return s;
  });
}

std::vector<std::string> SeedTexts(const std::string& source_dir, size_t max_bytes) {
  namespace fs = std::filesystem;
  std::vector<fs::path> paths;
  std::error_code ec;
  for (const char* dir : {"examples", "tests/data"}) {
    const fs::path root = fs::path(source_dir) / dir;
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".json") paths.push_back(it->path());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  for (const fs::path& p : paths) {
    if (fs::file_size(p, ec) > max_bytes || ec) continue;
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    texts.push_back(s.str());
  }
  return texts;
}

}  // namespace loadplan::fuzz
