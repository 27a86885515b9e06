// Synthetic checkpoints: valid random bytes per dtype, sharded safetensors + index.
#include "backend/checkpoint/synthetic.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backend/checkpoint/safetensors_write.h"
#include "base/bytes.h"

namespace loadplan::backend {
namespace {

using base::Dtype;

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t HashName(std::string_view s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

// Rewrites each `bits`-wide lane of a random word so its exponent field
// (`exp_bits` wide, just under the sign bit) lies in [lo, lo + span).
uint64_t ClampExponents(uint64_t w, int bits, int exp_bits, int mant_bits, uint64_t lo,
                        uint64_t span) {
  uint64_t out = 0;
  for (int at = 0; at < 64; at += bits) {
    const uint64_t lane = bits == 64 ? w : (w >> at) & ((uint64_t{1} << bits) - 1);
    const uint64_t sign = (lane >> (bits - 1)) & 1;
    const uint64_t mant = lane & ((uint64_t{1} << mant_bits) - 1);
    const uint64_t exp = lo + ((lane >> mant_bits) % span);
    (void)exp_bits;
    out |= ((sign << (bits - 1)) | (exp << mant_bits) | mant) << at;
  }
  return out;
}

uint64_t MakeValid(uint64_t w, Dtype d, bool e8m0) {
  switch (d) {
    case Dtype::kBF16: return ClampExponents(w, 16, 8, 7, 120, 11);
    case Dtype::kF16: return ClampExponents(w, 16, 5, 10, 10, 11);
    case Dtype::kF32: return ClampExponents(w, 32, 8, 23, 120, 11);
    case Dtype::kF64: return ClampExponents(w, 64, 11, 52, 1016, 11);
    case Dtype::kF8E4M3:
    case Dtype::kF8E5M2: return w & 0xBFBFBFBFBFBFBFBFull;  // exponent MSB clear: never inf/NaN
    case Dtype::kBool: return w & 0x0101010101010101ull;
    case Dtype::kF8E8M0: e8m0 = true; break;
    default: break;
  }
  if (!e8m0) return w;
  uint64_t out = 0;
  for (int b = 0; b < 8; ++b) out |= (112 + ((w >> (8 * b)) & 0xFF) % 31) << (8 * b);
  return out;
}

// Tensor names in natural order (layers.2 before layers.10), as real shards are.
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(a[i]) && std::isdigit(b[j])) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(a[i2])) ++i2;
      while (j2 < b.size() && std::isdigit(b[j2])) ++j2;
      const auto na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

struct Entry {
  TensorSpec spec;
  std::optional<std::string> encoding;
  uint64_t bytes = 0;
};

// The variable-free shape of `b` (rule K5) into `out`; an error naming it otherwise.
std::string FixedShape(const verifier::Buffer& b, std::vector<uint64_t>& out) {
  for (const verifier::Expr& d : b.shape) {
    const std::optional<int64_t> v = verifier::ValueAt(d, {});
    if (!v || *v < 0)
      return fmt::format("buffer {}: shape is not a fixed non-negative size", b.name);
    out.push_back(static_cast<uint64_t>(*v));
  }
  return {};
}

// The tensors `b` binds with the shape `gen` writes: its `tensor` of its shape, or each of its
// `tensors` of an equal share of its elements (1-D), which must divide evenly.
std::string BufferEntries(const verifier::Buffer& b, std::vector<Entry>& out) {
  if (b.slice) {
    return fmt::format(
        "buffer {}: it binds a slice of tensor {}, whose whole shape the manifest does not say; "
        "write the checkpoint with the model's own tool",
        b.name, b.tensor.value_or(""));
  }
  std::vector<uint64_t> shape;
  if (std::string err = FixedShape(b, shape); !err.empty()) return err;
  const std::vector<std::string_view> names = verifier::BoundTensors(b);
  if (b.tensors && !names.empty()) {
    std::optional<uint64_t> elements = 1;
    for (uint64_t d : shape) elements = elements ? base::CheckedMul(*elements, d) : std::nullopt;
    if (!elements) return fmt::format("buffer {}: its element count overflows", b.name);
    if (*elements % names.size() != 0) {
      return fmt::format(
          "buffer {}: its {} elements do not divide evenly among its {} listed tensors", b.name,
          *elements, names.size());
    }
    shape = {*elements / names.size()};
  }
  for (std::string_view name : names) {
    Entry e{.spec = {.name = std::string(name), .dtype = b.dtype, .shape = shape},
            .encoding = b.encoding};
    const auto bytes = TensorBytes(e.spec);
    if (!bytes && b.tensors) {
      return fmt::format("buffer {}: listed tensor {} of {} {} elements is not a whole byte count",
                         b.name, name, shape[0], base::DtypeName(b.dtype));
    }
    if (!bytes) return fmt::format("buffer {}: shape x dtype is not a whole byte count", b.name);
    e.bytes = *bytes;
    out.push_back(std::move(e));
  }
  return {};
}

std::string CollectTensors(const verifier::Manifest& m, std::optional<int> layers,
                           std::vector<Entry>& out) {
  std::set<std::string, std::less<>> seen;
  const auto wanted = [&](std::string_view t) {
    return !(layers && BeyondLayers(t, *layers)) && !seen.contains(t);
  };
  for (const verifier::Buffer& b : m.buffers) {
    const std::vector<std::string_view> names = verifier::BoundTensors(b);
    if (std::none_of(names.begin(), names.end(), wanted)) continue;
    std::vector<Entry> entries;
    if (std::string err = BufferEntries(b, entries); !err.empty()) return err;
    for (Entry& e : entries) {
      if (!wanted(e.spec.name)) continue;
      seen.insert(e.spec.name);
      out.push_back(std::move(e));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Entry& a, const Entry& b) { return NaturalLess(a.spec.name, b.spec.name); });
  return {};
}

std::vector<std::vector<size_t>> Shard(const std::vector<Entry>& entries, uint64_t shard_bytes) {
  std::vector<std::vector<size_t>> shards(1);
  uint64_t in_shard = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (in_shard > 0 && in_shard + entries[i].bytes > shard_bytes) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(i);
    in_shard += entries[i].bytes;
  }
  return shards;
}

}  // namespace

void SyntheticBytes(uint64_t seed, std::string_view tensor, Dtype dtype,
                    const std::optional<std::string>& encoding, uint64_t offset,
                    std::span<uint8_t> out) {
  const uint64_t key = SplitMix(seed ^ HashName(tensor));
  const bool e8m0 = encoding && *encoding == "e8m0";
  size_t i = 0;
  // Head and tail bytes one at a time; whole aligned words in the middle (little-endian).
  const auto byte_at = [&](uint64_t p) {
    return static_cast<uint8_t>(MakeValid(SplitMix(key + p / 8), dtype, e8m0) >> (8 * (p % 8)));
  };
  for (; i < out.size() && (offset + i) % 8 != 0; ++i) out[i] = byte_at(offset + i);
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t w = MakeValid(SplitMix(key + (offset + i) / 8), dtype, e8m0);
    std::memcpy(out.data() + i, &w, 8);
  }
  for (; i < out.size(); ++i) out[i] = byte_at(offset + i);
}

bool BeyondLayers(std::string_view tensor, int n) {
  static const std::regex kLayer(R"((^|\.)layers\.(\d+)\.)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(tensor.begin(), tensor.end(), m, kLayer)) return false;
  const std::string digits = m[2].str();
  uint64_t layer = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), layer);
  // A number past 64 bits is beyond any int n.
  return ec == std::errc::result_out_of_range || layer >= static_cast<uint64_t>(std::max(n, 0));
}

base::Result<GenSummary> GenerateCheckpoint(const verifier::Manifest& m, const GenOptions& o) {
  std::vector<Entry> entries;
  if (std::string err = CollectTensors(m, o.layers, entries); !err.empty())
    return base::Status::Error(err);
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec)
    return base::Status::Error(fmt::format("{}: cannot create: {}", o.dir, ec.message()),
                               base::ErrorKind::kIo);
  uint64_t total = 0, done = 0;
  for (const Entry& e : entries) total += e.bytes;
  const auto shards = Shard(entries, o.shard_bytes);
  nlohmann::ordered_json index = {{"metadata", {{"total_size", total}}},
                                  {"weight_map", nlohmann::ordered_json::object()}};
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string file = fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, shards.size());
    std::vector<TensorSpec> specs;
    for (size_t i : shards[s]) {
      specs.push_back(entries[i].spec);
      index["weight_map"][entries[i].spec.name] = file;
    }
    const auto fill = [&](size_t k, uint64_t off, std::span<uint8_t> out) {
      const Entry& e = entries[shards[s][k]];
      SyntheticBytes(o.seed, e.spec.name, e.spec.dtype, e.encoding, off, out);
      done += out.size();
      if (o.progress) o.progress(done, total);
    };
    if (base::Status st = WriteSafetensors(o.dir + "/" + file, specs, {{"format", "pt"}}, fill);
        !st.ok())
      return st;
  }
  const std::string index_path = o.dir + "/model.safetensors.index.json";
  std::ofstream out(index_path);
  out << index.dump(2) << "\n";
  out.close();
  if (!out)
    return base::Status::Error(fmt::format("{}: write failed", index_path), base::ErrorKind::kIo);
  return GenSummary{.bytes = total, .tensors = entries.size(), .shards = shards.size()};
}

}  // namespace loadplan::backend
