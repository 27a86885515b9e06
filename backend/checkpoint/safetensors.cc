// safetensors reader: header validation (the reference's rules, in its order).
#include "backend/checkpoint/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_set>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace loadplan::backend {
namespace {

base::Status Invalid(std::string message) { return base::Status::Error(std::move(message)); }

bool ValidUtf8(std::string_view s) {
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = c;
    if (c >= 0x80) {
      if ((c >> 5) == 6) {
        n = 1;
        cp = c & 0x1F;
      } else if ((c >> 4) == 14) {
        n = 2;
        cp = c & 0x0F;
      } else if ((c >> 3) == 30) {
        n = 3;
        cp = c & 0x07;
      } else
        return false;
      if (s.size() - i <= n) return false;
    }
    for (size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

// The header read by a SAX handler straight into TensorInfo (no JSON tree: a 163-shard
// checkpoint's headers hold ~14 MB of JSON). Problems are reported as a tree-based reader
// reports them: the JSON's own (syntax, a key twice in any object, nesting past kMaxDepth)
// win over the entries'; of those, the first member's in document order, each entry's
// checks in a fixed order (CheckEntry). Entry problems are collected while parsing goes on.
constexpr size_t kMaxDepth = 16;

// One tensor entry's pieces as they come.
struct Entry {
  std::string name;
  bool is_object = false;
  bool has_dtype = false, dtype_string = false;
  std::string dtype;
  bool has_shape = false, shape_array = false, shape_bad = false;
  std::vector<uint64_t> shape;
  bool has_offsets = false, offsets_array = false, offsets_bad = false;
  size_t offset_items = 0;
  std::vector<uint64_t> offsets;
};

// The checks of one entry, in order: an object, dtype/shape/data_offsets present, a known
// dtype, a shape of non-negative integers, data_offsets [begin, end] of non-negative integers.
std::string CheckEntry(Entry& e, TensorInfo& t) {
  const std::string& name = e.name;
  if (!e.is_object) return fmt::format("tensor '{}': entry is not an object", name);
  if (!e.has_dtype || !e.has_shape || !e.has_offsets) {
    return fmt::format("tensor '{}': missing {}", name,
                       !e.has_dtype   ? "dtype"
                       : !e.has_shape ? "shape"
                                      : "data_offsets");
  }
  const auto d = e.dtype_string ? base::ParseDtype(e.dtype) : std::nullopt;
  if (!d)
    return fmt::format("tensor '{}': unknown dtype {}", name,
                       e.dtype_string ? e.dtype : "(not a string)");
  t.dtype = *d;
  if (!e.shape_array) return fmt::format("tensor '{}': shape is not an array", name);
  if (e.shape_bad)
    return fmt::format("tensor '{}': shape has a dimension that is not a non-negative integer",
                       name);
  t.shape = std::move(e.shape);
  if (!e.offsets_array || e.offset_items != 2)
    return fmt::format("tensor '{}': data_offsets is not [begin, end]", name);
  if (e.offsets_bad)
    return fmt::format("tensor '{}': data_offsets are not non-negative integers", name);
  t.begin = e.offsets[0];
  t.end = e.offsets[1];
  t.name = std::move(e.name);
  return {};
}

class HeaderSax {
 public:
  using json = nlohmann::json;
  HeaderSax() { frames_.reserve(kMaxDepth); }
  ParsedHeader out;
  std::string json_error;   // the JSON's own problem: wins
  std::string entry_error;  // the first member's problem in document order

  bool null() { return Scalar(Value::kNull, 0, nullptr); }
  bool boolean(bool) { return Scalar(Value::kOther, 0, nullptr); }
  bool number_integer(json::number_integer_t v) {
    return v < 0 ? Scalar(Value::kOther, 0, nullptr)
                 : Scalar(Value::kUnsigned, static_cast<uint64_t>(v), nullptr);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    // Past int64 is no size here (a tree reader held integers as int64 too).
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? Scalar(Value::kOther, 0, nullptr)
               : Scalar(Value::kUnsigned, v, nullptr);
  }
  bool number_float(json::number_float_t, const std::string&) {
    return Scalar(Value::kOther, 0, nullptr);
  }
  bool binary(json::binary_t&) { return Scalar(Value::kOther, 0, nullptr); }
  bool string(std::string& v) { return Scalar(Value::kString, 0, &v); }

  bool start_object(std::size_t) { return Push(true); }
  bool start_array(std::size_t) { return Push(false); }
  bool end_object() { return Pop(); }
  bool end_array() { return Pop(); }

  bool key(std::string& k) {
    Frame& f = frames_.back();
    if (f.type == Type::kTop) {
      if (!top_keys_.insert(k).second) return Json(fmt::format("key '{}' appears twice", k));
      entry_ = Entry{.name = k};
      metadata_ = k == "__metadata__";
      meta_not_object_ = false;
      meta_bad_key_.clear();
    } else {
      // The three fields of an entry by bit; other keys (rare) by list.
      const int bit = k == "dtype" ? 1 : k == "shape" ? 2 : k == "data_offsets" ? 4 : 0;
      const bool twice = bit != 0 ? (f.fields & bit) != 0
                                  : std::find(f.keys.begin(), f.keys.end(), k) != f.keys.end();
      if (twice) return Json(fmt::format("key '{}' appears twice", k));
      if (bit != 0) {
        f.fields |= bit;
      } else {
        f.keys.push_back(k);
      }
    }
    f.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return Json(fmt::format("not JSON: {}", e.what()));
  }

 private:
  enum class Value { kNull, kString, kUnsigned, kContainer, kOther };
  enum class Type { kTop, kEntry, kMeta, kShape, kOffsets, kIgnored };
  struct Frame {
    Type type;
    std::string key;                // objects: the key whose value comes next
    int fields = 0;                 // dtype 1, shape 2, data_offsets 4: seen
    std::vector<std::string> keys;  // objects but the top: other keys seen
  };

  // What a value (a scalar, or a container that starts) means where it stands.
  Type Place(Value v, uint64_t u, const std::string* text) {
    if (frames_.empty()) return Type::kTop;
    Frame& f = frames_.back();
    switch (f.type) {
      case Type::kTop:
        if (metadata_) {
          if (v == Value::kContainer && container_is_object_) return Type::kMeta;
          if (v != Value::kNull) meta_not_object_ = true;
          return Type::kIgnored;
        }
        entry_.is_object = v == Value::kContainer && container_is_object_;
        return entry_.is_object ? Type::kEntry : Type::kIgnored;
      case Type::kEntry:
        if (f.key == "dtype") {
          entry_.has_dtype = true;
          entry_.dtype_string = v == Value::kString;
          if (text) entry_.dtype = *text;
        } else if (f.key == "shape") {
          entry_.has_shape = true;
          entry_.shape_array = v == Value::kContainer && !container_is_object_;
          if (entry_.shape_array) return Type::kShape;
        } else if (f.key == "data_offsets") {
          entry_.has_offsets = true;
          entry_.offsets_array = v == Value::kContainer && !container_is_object_;
          if (entry_.offsets_array) return Type::kOffsets;
        }
        return Type::kIgnored;
      case Type::kMeta:
        if (v == Value::kString) {
          out.metadata[f.key] = *text;
        } else if (meta_bad_key_.empty()) {
          meta_bad_key_ = f.key;
        }
        return Type::kIgnored;
      case Type::kShape:
        if (v == Value::kUnsigned) {
          entry_.shape.push_back(u);
        } else {
          entry_.shape_bad = true;
        }
        return Type::kIgnored;
      case Type::kOffsets:
        ++entry_.offset_items;
        if (v == Value::kUnsigned) {
          entry_.offsets.push_back(u);
        } else {
          entry_.offsets_bad = true;
        }
        return Type::kIgnored;
      case Type::kIgnored: return Type::kIgnored;
    }
    return Type::kIgnored;
  }

  bool Scalar(Value v, uint64_t u, const std::string* text) {
    Place(v, u, text);
    if (frames_.size() == 1) EndMember();  // a top-level member's value was this scalar
    return true;
  }
  bool Push(bool object) {
    if (frames_.size() >= kMaxDepth) return Json(fmt::format("nested deeper than {}", kMaxDepth));
    container_is_object_ = object;
    const Type t = Place(Value::kContainer, 0, nullptr);
    frames_.push_back({t, {}, 0, {}});
    return true;
  }
  bool Pop() {
    frames_.pop_back();
    if (frames_.size() == 1) EndMember();  // a top-level member's value closed
    return true;
  }

  void EndMember() {
    if (!entry_error.empty()) return;
    if (metadata_) {
      if (meta_not_object_) {
        entry_error = "__metadata__ is not an object of strings";
      } else if (!meta_bad_key_.empty()) {
        entry_error = fmt::format("__metadata__ value of '{}' is not a string", meta_bad_key_);
      }
      return;
    }
    entry_error = CheckEntry(entry_, out.tensors.emplace_back());
  }

  bool Json(std::string message) {
    if (json_error.empty()) json_error = std::move(message);
    return false;
  }

  std::vector<Frame> frames_;
  std::unordered_set<std::string> top_keys_;
  bool container_is_object_ = false;
  bool metadata_ = false, meta_not_object_ = false;
  std::string meta_bad_key_;
  Entry entry_;
};

// The reference's validate(): sorted by offsets, tiling [0, end), sizes = shape x dtype.
std::string ValidateLayout(std::vector<TensorInfo>& tensors, uint64_t data_bytes) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t start = 0;
  for (const TensorInfo& t : tensors) {
    if (t.end < t.begin)
      return fmt::format("tensor '{}': data_offsets [{}, {}) end before they begin", t.name,
                         t.begin, t.end);
    if (t.begin != start) {
      return fmt::format(
          "tensor '{}': data_offsets begin at {} but the previous tensor ends at {} ({})", t.name,
          t.begin, start, t.begin > start ? "a gap" : "an overlap");
    }
    start = t.end;
    uint64_t bits = base::DtypeBits(t.dtype);
    for (uint64_t dim : t.shape) {
      if (__builtin_mul_overflow(bits, dim, &bits)) {
        return fmt::format("tensor '{}': shape x dtype overflows 64 bits", t.name);
      }
    }
    if (bits % 8 != 0) {
      return fmt::format("tensor '{}': {} elements of {} do not fill whole bytes", t.name,
                         bits / base::DtypeBits(t.dtype), base::DtypeName(t.dtype));
    }
    if (t.bytes() != bits / 8) {
      return fmt::format("tensor '{}': data_offsets hold {} bytes but shape x dtype needs {}",
                         t.name, t.bytes(), bits / 8);
    }
  }
  if (start != data_bytes) {
    return fmt::format("tensors end at byte {} of a {} byte data section ({})", start, data_bytes,
                       start < data_bytes ? "trailing bytes" : "missing bytes");
  }
  return {};
}

}  // namespace

base::Result<ParsedHeader> ParseSafetensorsHeader(std::string_view header, uint64_t data_bytes) {
  if (!ValidUtf8(header)) return Invalid("header is not valid UTF-8");
  if (header.empty() || header.front() != '{') return Invalid("header does not start with '{'");
  if (header.size() > kMaxHeaderBytes)
    return Invalid(
        fmt::format("header is {} bytes, over the limit of {}", header.size(), kMaxHeaderBytes));
  // nlohmann's lexer takes a NUL for the end of its input; a raw NUL is never valid JSON.
  if (header.find('\0') != std::string_view::npos)
    return Invalid("header is not the expected JSON: a NUL byte (binary data?)");
  HeaderSax sax;
  const bool parsed = nlohmann::json::sax_parse(header.begin(), header.end(), &sax,
                                                nlohmann::json::input_format_t::json,
                                                /*strict=*/true);
  if (!parsed || !sax.json_error.empty()) {
    return Invalid(fmt::format("header is not the expected JSON: {}",
                               sax.json_error.empty() ? "not JSON" : sax.json_error));
  }
  if (!sax.entry_error.empty()) return Invalid(sax.entry_error);
  ParsedHeader r = std::move(sax.out);
  if (std::string err = ValidateLayout(r.tensors, data_bytes); !err.empty()) return Invalid(err);
  return r;
}

}  // namespace loadplan::backend
