// Internal to the parser: typed reads of JSON tree values with diagnostics
// (S2 unknown key, S3 type/required/enum, S5 name, S7 dtype, S10 expression,
// S11 number). Each read reports at the value's pointer and returns nullopt on a problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verifier/diag.h"
#include "base/dtype.h"
#include "verifier/expr.h"
#include "verifier/parse_json.h"

namespace loadplan::verifier::parse {

using Keys = std::initializer_list<std::string_view>;

// A JSON pointer whose text is built only when a diagnostic needs it: the
// document root, or a parent (which must outlive it) and one token.
class Ptr {
 public:
  Ptr() = default;  // the root, ""
  Ptr(const Ptr& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Ptr(const Ptr& parent, size_t index) : parent_(&parent), index_(index), is_index_(true) {}
  [[nodiscard]] std::string str() const;
  operator std::string() const { return str(); }  // NOLINT: diagnostics take the text

 private:
  const Ptr* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

class Fields {
 public:
  explicit Fields(DiagSink& sink) : sink_(sink) {}

  // S3 unless n is an object; `what` names it in the message ("buffer").
  bool Object(const json::Node& n, const Ptr& ptr, std::string_view what);
  // S2 for each key outside `allowed` (with did-you-mean), S3 for each missing `required`.
  void CheckKeys(const json::Node& obj, const Ptr& ptr, Keys allowed, Keys required);
  std::optional<int64_t> Int(const json::Node& n, const Ptr& ptr,
                             int64_t min = std::numeric_limits<int64_t>::min(),
                             int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<std::string> String(const json::Node& n, const Ptr& ptr);
  // An array of non-empty strings (possibly empty: the rules judge that); S3 at the array
  // when it is not one, at each item that is not a non-empty string.
  std::optional<std::vector<std::string>> NonEmptyStrings(const json::Node& n, const Ptr& ptr);
  std::optional<bool> Bool(const json::Node& n, const Ptr& ptr);
  // A string out of `values` (S3 with did-you-mean otherwise).
  std::optional<std::string> Enum(const json::Node& n, const Ptr& ptr, Keys values);
  std::optional<base::Dtype> DtypeValue(const json::Node& n, const Ptr& ptr);
  // A declared name: non-empty, no control characters; `identifier` also asks for
  // the expression grammar's NAME (variables and parameters appear in expressions).
  bool Name(std::string_view name, const Ptr& ptr, std::string_view what, bool identifier);
  // S10 on a syntax error.
  std::optional<Expr> ExprText(std::string_view text, const Ptr& ptr);
  // An integer >= min, or an expression string.
  std::optional<Expr> IntOrExpr(const json::Node& n, const Ptr& ptr, int64_t min);
  // An array of dims (each an integer >= 0 or an expression string), with
  // min_dims..max_dims entries. nullopt when any part is wrong.
  std::optional<std::vector<Expr>> Dims(const json::Node& n, const Ptr& ptr, size_t min_dims,
                                        size_t max_dims);

  DiagSink& sink() { return sink_; }

 private:
  void WrongType(const json::Node& n, const Ptr& ptr, std::string_view expected);
  DiagSink& sink_;
};

// True for the expression grammar's NAME: [A-Za-z_][A-Za-z0-9_.]*.
bool IsIdentifier(std::string_view s);

}  // namespace loadplan::verifier::parse
