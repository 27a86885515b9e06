// Strict JSON reading: nlohmann's SAX parser driving our own tree builder, so
// duplicate keys and nesting depth are seen (the DOM would drop them silently).
#include "verifier/parse_json.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/codes.h"
#include "verifier/parse_json_numbers.h"

namespace loadplan::verifier::json {
namespace {

// Objects with more members than this index their keys for the duplicate check.
constexpr size_t kLinearKeys = 16;

// One open container: the node being built and the key state. Its pointer is
// built from the stack only when a diagnostic needs it.
struct Frame {
  Node node;
  std::string key;  // objects: the key whose value comes next (also this frame's child's token)
  bool drop_next = false;  // the next value belongs to a duplicate key
  bool dropped = false;    // this container is (inside) the value of a duplicate key
  // Large objects: an open-addressing index of member positions (+1; 0 is empty).
  std::vector<size_t> slots;

  // True when k is already a member; otherwise records that k becomes the next member.
  bool Seen(const std::string& k);

 private:
  bool Probe(std::string_view k, size_t index);  // inserts index + 1 unless k is there
  void Rehash(size_t size);
};

bool Frame::Probe(std::string_view k, size_t index) {
  const size_t mask = slots.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(k)&mask;; i = (i + 1) & mask) {
    if (slots[i] == 0) {
      slots[i] = index + 1;
      return false;
    }
    if (node.members[slots[i] - 1].key == k) return true;
  }
}

void Frame::Rehash(size_t size) {
  slots.assign(size, 0);
  for (size_t j = 0; j < node.members.size(); ++j) Probe(node.members[j].key, j);
}

bool Frame::Seen(const std::string& k) {
  if (slots.empty() && node.members.size() < kLinearKeys) {
    for (const auto& [have, value] : node.members) {
      if (have == k) return true;
    }
    return false;
  }
  if (slots.size() < 2 * (node.members.size() + 1))
    Rehash(std::bit_ceil(std::max<size_t>(64, 4 * (node.members.size() + 1))));
  return Probe(k, node.members.size());
}

class TreeBuilder {
 public:
  using NJ = nlohmann::json;
  // `masked`: the originals of masked overflowing numbers (parse_json_numbers.h), or null.
  TreeBuilder(std::string_view text, const ParseLimits& limits, MaskedNumbers* masked)
      : text_(text), limits_(limits), masked_(masked) {}

  bool null() { return Add(Node{}); }
  bool boolean(bool v) {
    Node n = Make(Kind::kBool);
    n.boolean = v;
    return Add(std::move(n));
  }
  bool number_integer(NJ::number_integer_t v) { return AddInt(v); }
  bool number_unsigned(NJ::number_unsigned_t v) {
    if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return AddInt(static_cast<int64_t>(v));
    return AddText(Kind::kNumber, std::to_string(v));
  }
  bool number_float(NJ::number_float_t, const std::string& s);
  bool string(std::string& v) { return AddText(Kind::kString, std::move(v)); }
  bool binary(NJ::binary_t&) { return Add(Node{}); }  // never produced by the JSON reader
  bool start_object(size_t) { return Open(Kind::kObject); }
  bool start_array(size_t) { return Open(Kind::kArray); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k);
  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex);

  bool over_depth() const { return over_depth_; }
  bool failed() const { return failed_; }
  bool overflowed() const { return overflowed_; }  // a number overflowed a double
  std::optional<Node> TakeRoot() { return std::move(root_); }
  DiagSink& diags() { return sink_; }

 private:
  std::string PointerOf(size_t depth) const;  // the pointer of stack_[depth]
  bool Open(Kind kind);
  bool Close();
  bool Add(Node n);
  static Node Make(Kind k) {
    Node n;
    n.kind = k;
    return n;
  }
  bool AddInt(int64_t v) {
    Node n = Make(Kind::kInt);
    n.integer = v;
    return Add(std::move(n));
  }
  bool AddText(Kind k, std::string text) {
    Node n = Make(k);
    n.text = std::move(text);
    return Add(std::move(n));
  }

  std::string_view text_;
  const ParseLimits& limits_;
  MaskedNumbers* masked_;
  DiagSink sink_;  // S4 while reading, or the one J1
  std::vector<Frame> stack_;
  // Per depth: storage an open container at that depth fills, kept between
  // containers so filling does not reallocate each time; Close moves the
  // contents into an exactly sized node.
  struct Storage {
    std::vector<Member> members;
    std::vector<Node> items;
  };
  std::vector<Storage> pool_;
  std::optional<Node> root_;
  bool over_depth_ = false;
  bool failed_ = false;
  bool overflowed_ = false;
};

bool TreeBuilder::number_float(NJ::number_float_t, const std::string& s) {
  if (masked_ != nullptr && s == kMaskedNumber && !masked_->empty()) {
    std::optional<std::string> original = std::move(masked_->front());
    masked_->pop_front();
    if (original) return AddText(Kind::kNumber, std::move(*original));
  }
  return AddText(Kind::kNumber, s);
}

std::string TreeBuilder::PointerOf(size_t depth) const {
  std::string ptr;
  for (size_t i = 0; i < depth; ++i) {
    const Frame& f = stack_[i];
    ptr = f.node.kind == Kind::kArray ? ChildPointer(ptr, f.node.items.size())
                                      : ChildPointer(ptr, f.key);
  }
  return ptr;
}

bool TreeBuilder::key(std::string& k) {
  Frame& top = stack_.back();
  top.key = std::move(k);
  top.drop_next = top.Seen(top.key);
  // Inside the value of a dropped duplicate, nothing is reported: no pointer can name it
  // (it would name the kept first value), and its own S4 already says to delete it.
  if (top.drop_next && !top.dropped) {
    sink_.Error(
        std::string(codes::kDuplicateKey), ChildPointer(PointerOf(stack_.size() - 1), top.key),
        fmt::format("duplicate key \"{}\"; JSON readers disagree on which one wins", top.key),
        "keep only one of them (the first is used here)");
  }
  return true;
}

bool TreeBuilder::Open(Kind kind) {
  if (stack_.size() >= static_cast<size_t>(std::max(limits_.max_depth, 0))) {
    over_depth_ = true;
    return false;
  }
  const size_t depth = stack_.size();
  if (pool_.size() <= depth) pool_.resize(depth + 1);
  const bool dropped =
      depth > 0 && (stack_.back().dropped ||
                    (stack_.back().node.kind == Kind::kObject && stack_.back().drop_next));
  stack_.emplace_back();
  stack_.back().dropped = dropped;
  Node& node = stack_.back().node;
  node.kind = kind;
  node.members.swap(pool_[depth].members);
  node.items.swap(pool_[depth].items);
  return true;
}

bool TreeBuilder::Close() {
  const size_t depth = stack_.size() - 1;
  Node& open = stack_.back().node;
  Node done;
  done.kind = open.kind;
  done.members.assign(std::make_move_iterator(open.members.begin()),
                      std::make_move_iterator(open.members.end()));
  done.items.assign(std::make_move_iterator(open.items.begin()),
                    std::make_move_iterator(open.items.end()));
  open.members.clear();
  open.items.clear();
  pool_[depth].members.swap(open.members);
  pool_[depth].items.swap(open.items);
  stack_.pop_back();
  return Add(std::move(done));
}

bool TreeBuilder::Add(Node n) {
  if (stack_.empty()) {
    root_ = std::move(n);
    return true;
  }
  Frame& top = stack_.back();
  if (top.node.kind == Kind::kArray) {
    top.node.items.push_back(std::move(n));
  } else if (!top.drop_next) {
    top.node.members.push_back(
        Member{std::move(top.key), std::move(n)});  // key() sets the next one
  }
  return true;
}

// Line and column (1-based, columns in bytes) of a byte offset.
std::pair<size_t, size_t> LineColumn(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax
// error ...".
std::string StripNlohmannPrefix(std::string what) {
  if (!what.empty() && what.front() == '[') {
    if (size_t close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
  }
  if (what.rfind("parse error", 0) == 0) {
    if (size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
  }
  // "last read: '...'" quotes raw input bytes: keep the message printable UTF-8.
  std::string clean;
  for (char c : what) {
    auto u = static_cast<unsigned char>(c);
    clean += (u < 0x20 || u >= 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return clean;
}

bool TreeBuilder::parse_error(size_t position, const std::string&,
                              const nlohmann::detail::exception& ex) {
  failed_ = true;
  overflowed_ = ex.id == 406;  // out_of_range.406: "number overflow parsing '1e309'"
  size_t offset = position > 0 ? position - 1 : 0;
  auto [line, col] = LineColumn(text_, offset);
  sink_ = DiagSink();  // a duplicate key before the syntax error is noise
  sink_.Error(
      std::string(codes::kJsonSyntax), "",
      fmt::format("not JSON: line {}, column {}: {}", line, col, StripNlohmannPrefix(ex.what())));
  return false;
}

// One SAX parse of `text` into a tree; `overflowed` says a number overflowed a double.
std::optional<Node> ParseOnce(std::string_view text, const ParseLimits& limits,
                              MaskedNumbers* masked, DiagSink& sink, bool& overflowed) {
  const std::string code_syntax(codes::kJsonSyntax), code_limits(codes::kJsonLimits);
  TreeBuilder builder(text, limits, masked);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    sink.Error(code_syntax, "", fmt::format("not JSON: {}", StripNlohmannPrefix(e.what())));
    return std::nullopt;
  }
  if (builder.over_depth()) {
    sink.Error(code_limits, "",
               fmt::format("nesting is deeper than the limit of {}", limits.max_depth),
               "manifests nest a handful of levels; this is not one");
    return std::nullopt;
  }
  for (const Diagnostic& d : builder.diags().All()) sink.Report(d);
  if (!ok || builder.failed()) {
    if (!builder.failed()) sink.Error(code_syntax, "", "not JSON");
    overflowed = builder.overflowed();
    return std::nullopt;
  }
  return builder.TakeRoot();
}

}  // namespace

const Node* Node::Find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "boolean";
    case Kind::kInt: return "integer";
    case Kind::kNumber: return "number";
    case Kind::kString: return "string";
    case Kind::kArray: return "array";
    case Kind::kObject: return "object";
  }
  return "?";
}

std::optional<Node> ReadJson(std::string_view text, const ParseLimits& limits, DiagSink& sink) {
  const std::string code_syntax(codes::kJsonSyntax), code_limits(codes::kJsonLimits);
  if (text.size() > limits.max_bytes) {
    sink.Error(
        code_limits, "",
        fmt::format("document is {} bytes, over the limit of {}", text.size(), limits.max_bytes));
    return std::nullopt;
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    sink.Error(code_syntax, "", "not JSON: the document is empty",
               "a manifest is a JSON object: {\"schema\": 1, ...}");
    return std::nullopt;
  }
  // nlohmann's lexer takes a NUL byte for the end of input ("1\0x" would pass);
  // a raw NUL is never valid JSON (inside a string it must be escaped).
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    auto [line, col] = LineColumn(text, nul);
    sink.Error(code_syntax, "",
               fmt::format("not JSON: line {}, column {}: NUL byte (binary data?)", line, col));
    return std::nullopt;
  }
  bool overflowed = false;
  DiagSink first;
  std::optional<Node> root = ParseOnce(text, limits, nullptr, first, overflowed);
  if (overflowed) {
    // Valid JSON that nlohmann cannot hold in a double: parse again with it masked; the
    // model reports the literal (S11 where an integer is required).
    MaskedNumbers originals;
    if (std::optional<std::string> masked = MaskOverflowingNumbers(text, originals)) {
      return ParseOnce(*masked, limits, &originals, sink, overflowed);
    }
  }
  for (const Diagnostic& d : first.All()) sink.Report(d);
  return root;
}

}  // namespace loadplan::verifier::json
