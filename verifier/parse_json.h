// Internal to the parser: a strict JSON reader (nlohmann SAX) into a small tree
// that keeps raw number text, drops duplicate keys (reported S4) and enforces
// the size and depth limits (J2). Not part of the public interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "verifier/diag.h"
#include "verifier/parse.h"

namespace loadplan::verifier::json {

enum class Kind : uint8_t { kNull, kBool, kInt, kNumber, kString, kArray, kObject };

// kInt: an integer literal within int64. kNumber: any other number (a fraction,
// an exponent, or an integer beyond int64); `text` is its literal text.
struct Member;

struct Node {
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  std::string text;  // kString value, or kNumber literal
  std::vector<Node> items;
  std::vector<Member> members;  // first occurrence of each key, document order

  [[nodiscard]] const Node* Find(std::string_view key) const;
};

// One object member. A struct, not std::pair: a pair needs the complete Node where
// Node declares its vector (clang rejects that), a vector of Member does not.
struct Member {
  std::string key;
  Node value;
};

// nullopt when the text is not JSON or is over the limits (J1 / J2 reported);
// duplicate keys are reported as S4 at the duplicate's pointer, the first kept.
std::optional<Node> ReadJson(std::string_view text, const ParseLimits& limits, DiagSink& sink);

// "object", "array", "string", "integer", "number", "boolean", "null".
std::string_view KindName(Kind k);

}  // namespace loadplan::verifier::json
