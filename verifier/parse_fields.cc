// Typed reads of JSON tree values, each problem a diagnostic at the value's pointer.
#include "verifier/parse_fields.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "verifier/codes.h"

namespace loadplan::verifier::parse {
namespace {

std::string Code(std::string_view c) { return std::string(c); }

// A JSON string literal for messages (escapes control characters, never throws). A text over
// kQuoteBytes is quoted by its start and its length: a 1.6 MB shape expression makes a
// one-line diagnostic, not a 1.6 MB one.
constexpr size_t kQuoteBytes = 200;
std::string Quote(std::string_view s) {
  const auto literal = [](std::string_view t) {
    return nlohmann::json(std::string(t))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  if (s.size() <= kQuoteBytes) return literal(s);
  return fmt::format("{}... ({} bytes)", literal(s.substr(0, kQuoteBytes - 40)), s.size());
}

std::string Article(std::string_view noun) {
  bool vowel =
      !noun.empty() && std::string_view("aeiou").find(noun.front()) != std::string_view::npos;
  return fmt::format("{} {}", vowel ? "an" : "a", noun);
}

std::vector<std::string> ToStrings(Keys keys) { return {keys.begin(), keys.end()}; }

std::string Hint(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = DidYouMean(word, candidates);
  return best.empty() ? std::string() : fmt::format("did you mean {}?", Quote(best));
}

bool IsIntegerLiteral(std::string_view s) {
  if (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

constexpr std::string_view kReserved[] = {"ceil_div", "min", "max"};

}  // namespace

std::string Ptr::str() const {
  if (parent_ == nullptr) return {};
  return is_index_ ? ChildPointer(parent_->str(), index_) : ChildPointer(parent_->str(), key_);
}

bool IsIdentifier(std::string_view s) {
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (s.empty() || !alpha(s.front())) return false;
  return std::all_of(s.begin() + 1, s.end(),
                     [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '.'; });
}

void Fields::WrongType(const json::Node& n, const Ptr& ptr, std::string_view expected) {
  sink_.Error(Code(codes::kType), ptr,
              fmt::format("expected {}, got {}", expected, Article(json::KindName(n.kind))));
}

bool Fields::Object(const json::Node& n, const Ptr& ptr, std::string_view what) {
  if (n.kind == json::Kind::kObject) return true;
  WrongType(n, ptr, fmt::format("{} (an object)", Article(what)));
  return false;
}

void Fields::CheckKeys(const json::Node& obj, const Ptr& ptr, Keys allowed, Keys required) {
  for (const auto& [key, value] : obj.members) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    sink_.Error(Code(codes::kUnknownKey), ChildPointer(ptr.str(), key),
                fmt::format("unknown key {}", Quote(key)), Hint(key, ToStrings(allowed)));
  }
  for (std::string_view key : required) {
    if (obj.Find(key) != nullptr) continue;
    sink_.Error(Code(codes::kType), ptr, fmt::format("missing required key {}", Quote(key)));
  }
}

std::optional<int64_t> Fields::Int(const json::Node& n, const Ptr& ptr, int64_t min, int64_t max) {
  if (n.kind == json::Kind::kNumber) {
    std::string msg = IsIntegerLiteral(n.text)
                          ? fmt::format("integer {} does not fit in 64 bits", n.text)
                          : fmt::format("expected an integer, got {}", n.text);
    sink_.Error(Code(codes::kNumber), ptr, msg);
    return std::nullopt;
  }
  if (n.kind != json::Kind::kInt) {
    WrongType(n, ptr, "an integer");
    return std::nullopt;
  }
  if (n.integer < min || n.integer > max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? fmt::format(">= {}", min)
                            : fmt::format("in [{}, {}]", min, max);
    sink_.Error(Code(codes::kNumber), ptr,
                fmt::format("{} is out of range: must be {}", n.integer, range));
    return std::nullopt;
  }
  return n.integer;
}

std::optional<std::string> Fields::String(const json::Node& n, const Ptr& ptr) {
  if (n.kind == json::Kind::kString) return n.text;
  WrongType(n, ptr, "a string");
  return std::nullopt;
}

std::optional<std::vector<std::string>> Fields::NonEmptyStrings(const json::Node& n,
                                                                const Ptr& ptr) {
  if (n.kind != json::Kind::kArray) {
    WrongType(n, ptr, "an array of strings");
    return std::nullopt;
  }
  std::vector<std::string> out;
  out.reserve(n.items.size());
  bool ok = true;
  for (size_t i = 0; i < n.items.size(); ++i) {
    const Ptr at(ptr, i);
    std::optional<std::string> s = String(n.items[i], at);
    if (s && s->empty()) sink_.Error(Code(codes::kType), at, "expected a non-empty string");
    ok = ok && s && !s->empty();
    if (s) out.push_back(std::move(*s));
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<bool> Fields::Bool(const json::Node& n, const Ptr& ptr) {
  if (n.kind == json::Kind::kBool) return n.boolean;
  WrongType(n, ptr, "a boolean");
  return std::nullopt;
}

std::optional<std::string> Fields::Enum(const json::Node& n, const Ptr& ptr, Keys values) {
  std::optional<std::string> s = String(n, ptr);
  if (!s) return std::nullopt;
  if (std::find(values.begin(), values.end(), *s) != values.end()) return s;
  std::vector<std::string> all = ToStrings(values);
  std::string list;
  for (const std::string& v : all) list += (list.empty() ? "" : ", ") + Quote(v);
  sink_.Error(Code(codes::kType), ptr, fmt::format("{} is not one of {}", Quote(*s), list),
              Hint(*s, all));
  return std::nullopt;
}

std::optional<base::Dtype> Fields::DtypeValue(const json::Node& n, const Ptr& ptr) {
  std::optional<std::string> s = String(n, ptr);
  if (!s) return std::nullopt;
  if (std::optional<base::Dtype> d = base::ParseDtype(*s)) return d;
  std::vector<std::string> all;
  for (std::string_view name : base::AllDtypeNames()) all.emplace_back(name);
  sink_.Error(Code(codes::kDtype), ptr,
              fmt::format("unknown dtype {} (safetensors names: U8, BF16, F32, ...)", Quote(*s)),
              Hint(*s, all));
  return std::nullopt;
}

bool Fields::Name(std::string_view name, const Ptr& ptr, std::string_view what, bool identifier) {
  std::string problem;
  if (name.empty()) {
    problem = fmt::format("{} name is empty", what);
  } else if (std::any_of(name.begin(), name.end(), [](char c) {
               return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
             })) {
    problem = fmt::format("{} name {} holds a control character", what, Quote(name));
  } else if (identifier && !IsIdentifier(name)) {
    problem =
        fmt::format("{} name {} is not an identifier ([A-Za-z_][A-Za-z0-9_.]*)", what, Quote(name));
  } else if (identifier &&
             std::find(std::begin(kReserved), std::end(kReserved), name) != std::end(kReserved)) {
    problem = fmt::format("{} name {} is reserved for an expression function", what, Quote(name));
  }
  if (problem.empty()) return true;
  sink_.Error(Code(codes::kName), ptr, problem);
  return false;
}

std::optional<Expr> Fields::ExprText(std::string_view text, const Ptr& ptr) {
  base::Result<Expr> r = ParseExpr(text);
  if (r.ok()) return std::move(r).value();
  sink_.Error(Code(codes::kExprSyntax), ptr,
              fmt::format("expression {} does not parse: {}", Quote(text), r.status().message()));
  return std::nullopt;
}

std::optional<Expr> Fields::IntOrExpr(const json::Node& n, const Ptr& ptr, int64_t min) {
  if (n.kind == json::Kind::kString) return ExprText(n.text, ptr);
  if (n.kind != json::Kind::kInt && n.kind != json::Kind::kNumber) {
    WrongType(n, ptr, "an integer or an expression string");
    return std::nullopt;
  }
  std::optional<int64_t> v = Int(n, ptr, min);
  if (!v) return std::nullopt;
  return Expr::Const(*v);
}

std::optional<std::vector<Expr>> Fields::Dims(const json::Node& n, const Ptr& ptr, size_t min_dims,
                                              size_t max_dims) {
  if (n.kind != json::Kind::kArray) {
    WrongType(n, ptr, "an array");
    return std::nullopt;
  }
  std::vector<Expr> dims;
  dims.reserve(n.items.size());
  bool ok = true;
  for (size_t i = 0; i < n.items.size(); ++i) {
    std::optional<Expr> d = IntOrExpr(n.items[i], Ptr(ptr, i), 0);
    ok = ok && d.has_value();
    if (d) dims.push_back(std::move(*d));
  }
  if (n.items.size() < min_dims || n.items.size() > max_dims) {
    sink_.Error(
        Code(codes::kType), ptr,
        fmt::format("{} dimensions; expected {} to {}", n.items.size(), min_dims, max_dims));
    return std::nullopt;
  }
  if (!ok) return std::nullopt;
  return dims;
}

}  // namespace loadplan::verifier::parse
