// Checkpoint sets (single file or sharded index) and manifest binding checks.
#include "backend/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "verifier/diag.h"
#include "verifier/parse_json.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;
using verifier::json::Kind;

struct Resolved {
  std::vector<std::string> files;
  std::string error;
  std::string index;                         // the index file, when there is one
  std::map<std::string, std::string> where;  // its weight_map: tensor -> shard path
};

// The shard files of an index, in sorted order, each listed once.
Resolved ReadIndex(const fs::path& index) {
  std::ifstream in(index, std::ios::binary);
  if (!in) return {{}, fmt::format("{}: cannot open", index.string())};
  std::stringstream ss;
  ss << in.rdbuf();
  verifier::DiagSink sink;
  const auto doc = verifier::json::ReadJson(ss.str(), {.max_bytes = size_t{64} << 20, .max_depth = 8}, sink);
  if (!doc || sink.HasErrors() || doc->kind != Kind::kObject) {
    return {{}, fmt::format("{}: not a valid index JSON object", index.string())};
  }
  const auto* map = doc->Find("weight_map");
  if (!map || map->kind != Kind::kObject) return {{}, fmt::format("{}: no weight_map object", index.string())};
  std::set<std::string> files;
  Resolved out{.index = index.string()};
  for (const auto& [tensor, file] : map->members) {
    if (file.kind != Kind::kString || file.text.empty() || file.text == "." || file.text == ".." ||
        file.text.find('/') != std::string::npos) {
      return {{}, fmt::format("{}: weight_map entry for '{}' is not a file name", index.string(), tensor)};
    }
    const std::string path = (index.parent_path() / file.text).string();
    files.insert(path);
    out.where.emplace(tensor, path);
  }
  out.files.assign(files.begin(), files.end());
  return out;
}

Resolved Resolve(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) {
    // The error_code overloads throughout: a path too long or unreadable is an error, not a throw.
    const fs::path index = p / "model.safetensors.index.json";
    if (fs::exists(index, ec)) return ReadIndex(index);
    if (ec) return {{}, fmt::format("cannot read {}: {}", index.string(), ec.message())};
    std::vector<std::string> found;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".safetensors") found.push_back(it->path().string());
    }
    if (ec) return {{}, fmt::format("cannot list {}: {}", path, ec.message())};
    if (found.size() != 1) {
      return {{}, fmt::format("{}: expected model.safetensors.index.json or exactly one .safetensors file, found {}", path, found.size())};
    }
    return {found, {}};
  }
  if (p.extension() == ".json") return ReadIndex(p);
  return {{path}, {}};
}

// An index must say where its tensors are: every weight_map entry names the shard that holds
// it (loaders that trust the map would otherwise read another shard, or find nothing). A
// shard's tensor the map leaves out is allowed (it is found by the shard's header).
std::string CheckIndex(const Checkpoint& c, const Resolved& r) {
  if (r.index.empty()) return {};
  for (const auto& [tensor, path] : r.where) {
    const Checkpoint::Located at = c.Find(tensor);
    if (at.info == nullptr) return fmt::format("{}: weight_map lists '{}' in {}, which does not hold it", r.index, tensor, path);
    if (at.file->path() != path) {
      return fmt::format("{}: weight_map lists '{}' in {}, but it is in {}", r.index, tensor, path, at.file->path());
    }
  }
  return {};
}

}  // namespace

Checkpoint::OpenResult Checkpoint::Open(const std::string& path) {
  Resolved r = Resolve(path);
  if (!r.error.empty()) return {nullptr, r.error};
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  for (const std::string& f : r.files) {
    auto opened = SafetensorsFile::Open(f);
    if (!opened.file) return {nullptr, opened.error};
    c->files_.push_back(std::move(*opened.file));
  }
  for (size_t i = 0; i < c->files_.size(); ++i) {
    for (const TensorInfo& t : c->files_[i].tensors()) {
      if (!c->where_.emplace(t.name, i).second) {
        return {nullptr, fmt::format("tensor '{}' is stored twice: in {} and {}", t.name,
                                     c->files_[c->where_.at(t.name)].path(), c->files_[i].path())};
      }
    }
  }
  if (std::string error = CheckIndex(*c, r); !error.empty()) return {nullptr, error};
  return {std::move(c), {}};
}

Checkpoint::Located Checkpoint::Find(std::string_view tensor) const {
  const auto it = where_.find(tensor);
  if (it == where_.end()) return {};
  const SafetensorsFile& f = files_[it->second];
  return {&f, f.Find(tensor)};
}

uint64_t Checkpoint::TotalBytes() const {
  uint64_t total = 0;
  for (const auto& f : files_) {
    for (const auto& t : f.tensors()) total += t.bytes();
  }
  return total;
}

std::vector<std::string> CheckBindings(const simulator::LoadPlan& plan, const Checkpoint& ckpt) {
  std::vector<std::string> errors;
  for (const simulator::PlannedBuffer& b : plan.buffers) {
    if (!b.tensor) continue;
    const auto where = fmt::format("buffer {} (/buffers/{})", b.name, verifier::EscapePointerToken(b.name));
    const Checkpoint::Located loc = ckpt.Find(*b.tensor);
    if (!loc.info) {
      errors.push_back(fmt::format("{}: tensor {} is not in the checkpoint", where, *b.tensor));
      continue;
    }
    if (loc.info->dtype != b.dtype) {
      errors.push_back(fmt::format("{}: tensor {} has dtype {} in {}, the manifest says {}", where, *b.tensor,
                                   verifier::DtypeName(loc.info->dtype), loc.file->path(), verifier::DtypeName(b.dtype)));
    }
    const std::vector<uint64_t> have(loc.info->shape.begin(), loc.info->shape.end());
    if (!b.shape || *b.shape != have) {
      errors.push_back(fmt::format("{}: tensor {} has shape [{}] in {}, the manifest says [{}]", where, *b.tensor,
                                   fmt::join(have, ", "), loc.file->path(),
                                   b.shape ? fmt::format("{}", fmt::join(*b.shape, ", ")) : "variable"));
    }
  }
  return errors;
}

}  // namespace loadplan::backend
