// Checkpoint sets (single file or sharded index).
#include "backend/checkpoint/checkpoint.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/input_file.h"

namespace loadplan::backend {
namespace {

namespace fs = std::filesystem;

base::Status Invalid(std::string message) { return base::Status::Error(std::move(message)); }
base::Status Io(std::string message) {
  return base::Status::Error(std::move(message), base::ErrorKind::kIo);
}

struct Resolved {
  std::vector<std::string> files;  // sorted
  std::string index;               // the index file, when there is one
  // Its weight_map, sorted by tensor name (each once): tensor -> `files` index.
  std::vector<std::pair<std::string, uint32_t>> where;
};

// The index read by a SAX handler straight into (tensor, shard name) pairs: an index is
// megabytes of JSON (DeepSeek-V3's: 8.9 MB, 91,991 entries), and only its weight_map is used.
// Strict all the same: one JSON object, at most kIndexDepth deep, no key twice in it or in its
// weight_map, every weight_map value a string.
constexpr size_t kIndexDepth = 8;
constexpr size_t kIndexBytes = size_t{64} << 20;

class IndexSax {
 public:
  using json = nlohmann::json;
  std::vector<std::pair<std::string, std::string>> entries;  // weight_map, in file order
  std::string error;                                         // empty: fine so far
  bool has_map = false;

  bool null() { return Value("null"); }
  bool boolean(bool) { return Value("a boolean"); }
  bool number_integer(json::number_integer_t) { return Value("a number"); }
  bool number_unsigned(json::number_unsigned_t) { return Value("a number"); }
  bool number_float(json::number_float_t, const std::string&) { return Value("a number"); }
  bool binary(json::binary_t&) { return Value("binary"); }
  bool string(std::string& v) {
    if (!InMap()) return true;
    entries.emplace_back(std::move(key_), std::move(v));
    return true;
  }
  bool start_object(std::size_t) {
    if (InMap()) {
      return Fail(fmt::format("weight_map entry for '{}' is not a file name", key_));
    } else if (depth_ == 1 && key_ == "weight_map") {
      map_ = true;
      has_map = true;
    }
    return Push();
  }
  bool end_object() {
    if (depth_ == 2 && map_) map_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) return Fail("not a JSON object");
    if (InMap()) return Fail(fmt::format("weight_map entry for '{}' is not a file name", key_));
    if (depth_ == 1 && key_ == "weight_map") return Fail("weight_map is not an object");
    return Push();
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(std::string& k) {
    // Keys of the top level must be unique (weight_map's are checked as it is read into the
    // tensor map: a loader that trusts the map would take one of two shards); deeper objects
    // (metadata) are not looked at.
    if (depth_ == 1 && !top_keys_.insert(k).second)
      return Fail(fmt::format("key '{}' appears twice", k));
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return Fail(fmt::format("not JSON: {}", e.what()));
  }

 private:
  [[nodiscard]] bool InMap() const { return map_ && depth_ == 2; }
  bool Value(std::string_view what) {
    if (depth_ == 0) return Fail("not a JSON object");
    if (InMap()) return Fail(fmt::format("weight_map entry for '{}' is not a file name", key_));
    if (depth_ == 1 && key_ == "weight_map")
      return Fail(fmt::format("weight_map is {}, not an object", what));
    return true;
  }
  bool Push() {
    if (++depth_ > kIndexDepth) return Fail(fmt::format("nested deeper than {}", kIndexDepth));
    return true;
  }
  bool Fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }
  size_t depth_ = 0;
  bool map_ = false;
  std::string key_;
  std::set<std::string> top_keys_;
};

// The shard files of an index, in sorted order, each listed once.
base::Result<Resolved> ReadIndex(const fs::path& index) {
  base::Result<std::string> read = base::ReadInputFile(index.string(), kIndexBytes, "index");
  if (!read.ok()) return read.status();
  const std::string& text = *read;
  const std::string where = index.string();
  // nlohmann's lexer takes a NUL for the end of its input; a raw NUL is never valid JSON.
  if (text.find('\0') != std::string::npos)
    return Invalid(fmt::format("{}: not a valid index JSON object: a NUL byte", where));
  IndexSax sax;
  const bool parsed = nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json,
                                                /*strict=*/true);
  if (!parsed || !sax.error.empty()) {
    return Invalid(fmt::format("{}: not a valid index JSON object: {}", where,
                               sax.error.empty() ? "not JSON" : sax.error));
  }
  if (!sax.has_map) return Invalid(fmt::format("{}: no weight_map object", where));
  // A few shard names repeat over many tensors: each is looked up among the names seen so far
  // and numbered in sorted order once all are known.
  std::map<std::string, uint32_t, std::less<>> shards;  // name -> sorted rank
  std::vector<std::map<std::string, uint32_t, std::less<>>::iterator> shard_of;
  shard_of.reserve(sax.entries.size());
  for (const auto& [tensor, file] : sax.entries) {
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos) {
      return Invalid(
          fmt::format("{}: weight_map entry for '{}' is not a file name", where, tensor));
    }
    shard_of.push_back(shards.try_emplace(file, 0).first);
  }
  const fs::path dir = index.parent_path();
  Resolved out{.index = where};
  for (auto& [name, rank] : shards) {  // sorted: one directory
    rank = static_cast<uint32_t>(out.files.size());
    out.files.push_back((dir / name).string());
  }
  out.where.reserve(sax.entries.size());
  for (size_t i = 0; i < sax.entries.size(); ++i)
    out.where.emplace_back(std::move(sax.entries[i].first), shard_of[i]->second);
  std::sort(out.where.begin(), out.where.end());
  const auto twice =
      std::adjacent_find(out.where.begin(), out.where.end(),
                         [](const auto& a, const auto& b) { return a.first == b.first; });
  if (twice != out.where.end())
    return Invalid(fmt::format("{}: not a valid index JSON object: weight_map lists '{}' twice",
                               where, twice->first));
  return out;
}

base::Result<Resolved> Resolve(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) {
    // The error_code overloads throughout: a path too long or unreadable is an error, not a throw.
    const fs::path index = p / "model.safetensors.index.json";
    if (fs::exists(index, ec)) return ReadIndex(index);
    if (ec) return Io(fmt::format("cannot read {}: {}", index.string(), ec.message()));
    std::vector<std::string> found;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".safetensors") found.push_back(it->path().string());
    }
    if (ec) return Io(fmt::format("cannot list {}: {}", path, ec.message()));
    if (found.size() != 1) {
      return Invalid(fmt::format(
          "{}: expected model.safetensors.index.json or exactly one .safetensors file, found {}",
          path, found.size()));
    }
    return Resolved{.files = found};
  }
  if (p.extension() == ".json") return ReadIndex(p);
  return Resolved{.files = {path}};
}

// An index must say where its tensors are: every weight_map entry names the shard that holds
// it (loaders that trust the map would otherwise read another shard, or find nothing). A
// shard's tensor the map leaves out is allowed (it is found by the shard's header).
base::Status CheckIndex(const Checkpoint& c, const Resolved& r) {
  if (r.index.empty()) return base::Status::Ok();
  for (const auto& [tensor, file] : r.where) {
    const Checkpoint::Located at = c.Find(tensor);
    const std::string& path = r.files[file];
    if (at.info == nullptr) {
      return Invalid(fmt::format("{}: weight_map lists '{}' in {}, which does not hold it", r.index,
                                 tensor, path));
    }
    if (at.file->path() != path) {
      return Invalid(fmt::format("{}: weight_map lists '{}' in {}, but it is in {}", r.index,
                                 tensor, path, at.file->path()));
    }
  }
  return base::Status::Ok();
}

// Opens (and parses the header of) every file, on up to kOpenThreads threads: a
// 163-shard checkpoint's headers hold ~15 MB of JSON, and shards are independent.
constexpr unsigned kOpenThreads = 8;
std::vector<base::Result<std::unique_ptr<SafetensorsFile>>> OpenAll(
    const std::vector<std::string>& files) {
  std::vector<base::Result<std::unique_ptr<SafetensorsFile>>> out;
  out.reserve(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    out.emplace_back(base::Status::Error("not opened", base::ErrorKind::kInternal));
  const unsigned threads = static_cast<unsigned>(std::min<size_t>(
      {files.size(), kOpenThreads, std::max(1u, std::thread::hardware_concurrency())}));
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      try {  // nothing may escape a thread: an allocation failure on a hostile header included
        out[i] = SafetensorsFile::Open(files[i]);
      } catch (const std::exception& e) {
        out[i] = base::Status::Error(fmt::format("{}: {}", files[i], e.what()),
                                     base::ErrorKind::kInternal);
      }
    }
  };
  std::vector<std::jthread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear();  // joins every thread before `out` is returned
  return out;
}

// The .safetensors files of a folder, sorted (none when it cannot be listed: whoever needs
// them opens them by name later and says why they cannot be).
std::vector<std::string> ListShards(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".safetensors") found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

base::Result<std::unique_ptr<Checkpoint>> Checkpoint::Open(const std::string& path) {
  // A folder with an index: the shards' headers are read while the index is (an index is
  // megabytes of JSON too). They are listed from the folder and kept only where the index
  // names them; the others are closed unread, their problems unreported.
  using Opened = base::Result<std::unique_ptr<SafetensorsFile>>;
  std::error_code ec;
  std::vector<std::string> listed;
  std::future<std::vector<Opened>> early;
  if (fs::is_directory(path, ec) &&
      fs::exists(fs::path(path) / "model.safetensors.index.json", ec)) {
    listed = ListShards(path);
    early = std::async(std::launch::async, [&listed] { return OpenAll(listed); });
  }
  base::Result<Resolved> resolved = Resolve(path);
  std::vector<Opened> pre = early.valid() ? early.get() : std::vector<Opened>{};
  if (!resolved.ok()) return resolved.status();
  const Resolved& r = *resolved;
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  std::vector<Opened> opened;
  std::vector<std::string> rest;  // index files the folder listing did not have
  opened.reserve(r.files.size());
  for (const std::string& f : r.files) {
    const auto it = std::lower_bound(listed.begin(), listed.end(), f);
    if (it != listed.end() && *it == f) {
      opened.push_back(std::move(pre[static_cast<size_t>(it - listed.begin())]));
    } else {
      opened.push_back(SafetensorsFile::Open(f));
    }
  }
  for (auto& f : opened) {
    if (!f.ok()) return f.status();  // the first failing file in sorted order: deterministic
    c->files_.push_back(std::move(**f));
  }
  for (size_t i = 0; i < c->files_.size(); ++i) {
    const std::vector<TensorInfo>& tensors = c->files_[i].tensors();
    for (size_t k = 0; k < tensors.size(); ++k)
      c->by_name_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(k)});
  }
  // Sorted by name, and by file where one name is in two (stable: files are in order).
  std::stable_sort(c->by_name_.begin(), c->by_name_.end(),
                   [&c](Ref a, Ref b) { return c->Name(a) < c->Name(b); });
  const auto twice = std::adjacent_find(c->by_name_.begin(), c->by_name_.end(),
                                        [&c](Ref a, Ref b) { return c->Name(a) == c->Name(b); });
  if (twice != c->by_name_.end()) {
    return Invalid(fmt::format("tensor '{}' is stored twice: in {} and {}", c->Name(*twice),
                               c->files_[twice->file].path(), c->files_[twice[1].file].path()));
  }
  if (base::Status st = CheckIndex(*c, r); !st.ok()) return st;
  return c;
}

const std::string& Checkpoint::Name(Ref r) const { return files_[r.file].tensors()[r.tensor].name; }

Checkpoint::Located Checkpoint::At(Ref r) const {
  return {&files_[r.file], &files_[r.file].tensors()[r.tensor]};
}

Checkpoint::Located Checkpoint::Find(std::string_view tensor) const {
  const auto it = std::lower_bound(by_name_.begin(), by_name_.end(), tensor,
                                   [this](Ref r, std::string_view n) { return Name(r) < n; });
  return it != by_name_.end() && Name(*it) == tensor ? At(*it) : Located{};
}

std::vector<Checkpoint::Located> Checkpoint::ByName() const {
  std::vector<Located> out;
  out.reserve(by_name_.size());
  for (const Ref r : by_name_) out.push_back(At(r));
  return out;
}

uint64_t Checkpoint::TotalBytes() const {
  uint64_t total = 0;
  for (const auto& f : files_) {
    for (const auto& t : f.tensors()) total += t.bytes();
  }
  return total;
}

base::Status Checkpoint::CheckUnchanged() const {
  for (const SafetensorsFile& f : files_) {
    if (base::Status st = f.CheckUnchanged(); !st.ok()) return st;
  }
  return base::Status::Ok();
}

}  // namespace loadplan::backend
