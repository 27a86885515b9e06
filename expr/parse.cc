// Recursive-descent parser for size expressions (grammar in expr/expr.h).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "expr/expr.h"

namespace loadplan::expr {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  base::Result<Expr> Run() {
    std::optional<Node> n = ParseSum(0);
    SkipSpace();
    if (n && pos_ < text_.size()) Unexpected();
    if (!error_.empty()) return base::Status::Error(error_).WithPlace("", error_col_);
    return std::move(n->e);
  }

 private:
  struct Node {
    Expr e;
    int depth = 1;  // height of the tree under e
  };

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  std::nullopt_t Fail(std::string message, size_t column) {
    if (error_.empty()) {
      error_ = fmt::format("{} at column {}", message, column);
      error_col_ = column;
    }
    return std::nullopt;
  }
  std::nullopt_t Unexpected() {
    if (Peek() == '\0') return Fail("unexpected end of input", pos_);
    return Fail(fmt::format("unexpected '{}'", text_[pos_]), pos_);
  }

  std::optional<Node> Combine(ExprOp op, Node a, Node b, size_t column) {
    int depth = 1 + std::max(a.depth, b.depth);
    if (depth > kMaxExprDepth)
      return Fail(fmt::format("expression deeper than {}", kMaxExprDepth), column);
    return Node{Expr::Binary(op, std::move(a.e), std::move(b.e)), depth};
  }

  std::optional<Node> ParseSum(int nesting) {
    std::optional<Node> acc = ParseTerm(nesting);
    while (acc && (Peek() == '+' || Peek() == '-')) {
      size_t column = pos_;
      ExprOp op = text_[pos_++] == '+' ? ExprOp::kAdd : ExprOp::kSub;
      std::optional<Node> rhs = ParseTerm(nesting);
      if (!rhs) return std::nullopt;
      acc = Combine(op, std::move(*acc), std::move(*rhs), column);
    }
    return acc;
  }

  std::optional<Node> ParseTerm(int nesting) {
    std::optional<Node> acc = ParseUnary(nesting);
    while (acc && (Peek() == '*' || Peek() == '/' || Peek() == '%')) {
      size_t column = pos_;
      char c = text_[pos_++];
      ExprOp op = c == '*' ? ExprOp::kMul : c == '/' ? ExprOp::kDiv : ExprOp::kMod;
      std::optional<Node> rhs = ParseUnary(nesting);
      if (!rhs) return std::nullopt;
      acc = Combine(op, std::move(*acc), std::move(*rhs), column);
    }
    return acc;
  }

  std::optional<Node> ParseUnary(int nesting) {
    if (Peek() != '-') return ParseAtom(nesting);
    size_t column = pos_++;
    if (nesting + 1 > kMaxExprNesting)
      return Fail(fmt::format("nesting deeper than {}", kMaxExprNesting), column);
    if (IsDigit(Peek())) return ParseInt(true, column);
    std::optional<Node> inner = ParseUnary(nesting + 1);
    if (!inner) return std::nullopt;
    if (inner->depth + 1 > kMaxExprDepth)
      return Fail(fmt::format("expression deeper than {}", kMaxExprDepth), column);
    return Node{-std::move(inner->e), inner->depth + 1};
  }

  // Digits at pos_; `negative` when a '-' at `column` precedes them.
  std::optional<Node> ParseInt(bool negative, size_t column) {
    const uint64_t limit = negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    uint64_t v = 0;
    bool too_big = false;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      uint64_t d = static_cast<uint64_t>(text_[pos_++] - '0');
      if (v > (limit - d) / 10) too_big = true;
      if (!too_big) v = v * 10 + d;
    }
    if (too_big) return Fail("integer out of int64 range", column);
    int64_t value = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    return Node{Expr::Const(value), 1};
  }

  std::optional<Node> ParseAtom(int nesting) {
    char c = Peek();
    if (IsDigit(c)) return ParseInt(false, pos_);
    if (c == '(') {
      size_t column = pos_++;
      if (nesting + 1 > kMaxExprNesting)
        return Fail(fmt::format("nesting deeper than {}", kMaxExprNesting), column);
      std::optional<Node> inner = ParseSum(nesting + 1);
      if (!inner) return std::nullopt;
      if (Peek() != ')') return Unexpected();
      ++pos_;
      return inner;
    }
    if (!IsNameStart(c)) return Unexpected();
    size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (Peek() != '(') return Node{Expr::Var(std::move(name)), 1};
    return ParseCall(name, start, nesting);
  }

  std::optional<Node> ParseCall(const std::string& name, size_t column, int nesting) {
    std::optional<ExprOp> op;
    if (name == "ceil_div") op = ExprOp::kCeilDiv;
    if (name == "min") op = ExprOp::kMin;
    if (name == "max") op = ExprOp::kMax;
    if (!op) return Fail(fmt::format("unknown function '{}'", name), column);
    if (nesting + 1 > kMaxExprNesting)
      return Fail(fmt::format("nesting deeper than {}", kMaxExprNesting), column);
    ++pos_;  // '('
    std::optional<Node> a = ParseSum(nesting + 1);
    if (!a) return std::nullopt;
    if (Peek() != ',')
      return Peek() == ')' ? Fail(fmt::format("{} takes 2 arguments", name), pos_) : Unexpected();
    ++pos_;
    std::optional<Node> b = ParseSum(nesting + 1);
    if (!b) return std::nullopt;
    if (Peek() != ')')
      return Peek() == ',' ? Fail(fmt::format("{} takes 2 arguments", name), pos_) : Unexpected();
    ++pos_;
    return Combine(*op, std::move(*a), std::move(*b), column);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
  size_t error_col_ = 0;
};

}  // namespace

base::Result<Expr> ParseExpr(std::string_view text) { return Parser(text).Run(); }

}  // namespace loadplan::expr
