// Diagnostics: the sink, JSON pointer helpers, text/JSON formatting and did-you-mean.
#include "verifier/diag.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace loadplan::verifier {
namespace {

// Pointers hold names verbatim; show control characters visibly in text output.
std::string Printable(std::string_view pointer) {
  if (pointer.empty()) return "/";
  std::string out;
  for (char c : pointer) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? fmt::format("\\u{:04x}", u) : std::string(1, c);
  }
  return out;
}

std::string_view SeverityName(Severity s) { return s == Severity::kError ? "error" : "warning"; }

bool IsIndex(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Decimal strings of any length compared as numbers (no overflow): fewer
// significant digits is smaller, then digit by digit.
int CompareIndex(std::string_view a, std::string_view b) {
  auto strip = [](std::string_view s) {
    while (s.size() > 1 && s.front() == '0') s.remove_prefix(1);
    return s;
  };
  a = strip(a);
  b = strip(b);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b);
}

std::string Unescape(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out.push_back(token[i + 1] == '0' ? '~' : '/');
      ++i;
    } else {
      out.push_back(token[i]);
    }
  }
  return out;
}

std::vector<std::string> SplitPointer(std::string_view p) {
  std::vector<std::string> tokens;
  if (p.empty()) return tokens;
  if (p.front() == '/') p.remove_prefix(1);
  while (true) {
    size_t slash = p.find('/');
    tokens.push_back(Unescape(p.substr(0, slash)));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return tokens;
}

// "S10" after "S2": the letter part bytewise, then the number as a number.
bool CodeLess(std::string_view a, std::string_view b) {
  size_t ia = a.find_first_of("0123456789");
  size_t ib = b.find_first_of("0123456789");
  std::string_view pa = a.substr(0, ia), pb = b.substr(0, ib);
  if (pa != pb) return pa < pb;
  std::string_view na = ia == std::string_view::npos ? "" : a.substr(ia);
  std::string_view nb = ib == std::string_view::npos ? "" : b.substr(ib);
  if (IsIndex(na) && IsIndex(nb)) return CompareIndex(na, nb) < 0;
  return na < nb;
}

// Optimal string alignment distance (transpositions count 1), ASCII case folded.
size_t EditDistance(std::string_view a, std::string_view b) {
  auto low = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

void DiagSink::Error(std::string code, std::string pointer, std::string message, std::string hint,
                     std::vector<Note> notes) {
  Report({Severity::kError, std::move(code), std::move(pointer), std::move(message),
          std::move(hint), std::move(notes)});
}

void DiagSink::Warning(std::string code, std::string pointer, std::string message, std::string hint,
                       std::vector<Note> notes) {
  Report({Severity::kWarning, std::move(code), std::move(pointer), std::move(message),
          std::move(hint), std::move(notes)});
}

bool DiagSink::HasErrors() const { return ErrorCount() > 0; }

size_t DiagSink::ErrorCount() const {
  return static_cast<size_t>(std::count_if(diags_.begin(), diags_.end(), [](const Diagnostic& d) {
    return d.severity == Severity::kError;
  }));
}

std::vector<Diagnostic> DiagSink::Sorted() const {
  std::vector<Diagnostic> out = diags_;
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (PointerLess(a.pointer, b.pointer)) return true;
    if (PointerLess(b.pointer, a.pointer)) return false;
    if (a.code != b.code) return CodeLess(a.code, b.code);
    return a.message < b.message;
  });
  return out;
}

void AppendEscaped(std::string& out, std::string_view token) {
  for (size_t at = token.find_first_of("~/"); at != std::string_view::npos;
       at = token.find_first_of("~/")) {
    out.append(token.substr(0, at));
    out += token[at] == '~' ? "~0" : "~1";
    token.remove_prefix(at + 1);
  }
  out.append(token);
}

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  AppendEscaped(out, token);
  return out;
}

std::string ChildPointer(std::string_view parent, std::string_view token) {
  std::string out;
  out.reserve(parent.size() + 1 + token.size());
  out.append(parent);
  out.push_back('/');
  AppendEscaped(out, token);
  return out;
}

std::string ChildPointer(std::string_view parent, size_t index) {
  char digits[24];
  char* end = std::to_chars(std::begin(digits), std::end(digits), index).ptr;
  return ChildPointer(parent, std::string_view(digits, static_cast<size_t>(end - digits)));
}

bool PointerLess(std::string_view a, std::string_view b) {
  std::vector<std::string> ta = SplitPointer(a), tb = SplitPointer(b);
  for (size_t i = 0; i < ta.size() && i < tb.size(); ++i) {
    if (ta[i] == tb[i]) continue;
    if (IsIndex(ta[i]) && IsIndex(tb[i])) {
      int c = CompareIndex(ta[i], tb[i]);
      if (c != 0) return c < 0;
      return ta[i] < tb[i];  // "01" vs "1": any fixed order
    }
    return ta[i] < tb[i];
  }
  return ta.size() < tb.size();
}

std::string FormatText(const std::vector<Diagnostic>& diags, std::string_view file) {
  std::string out;
  for (const Diagnostic& d : diags) {
    out += fmt::format("{}: {}[{}] {}: {}\n", file, SeverityName(d.severity), d.code,
                       Printable(d.pointer), d.message);
    if (!d.hint.empty()) out += fmt::format("  hint: {}\n", d.hint);
    for (const Note& n : d.notes) {
      out += fmt::format("  note: {}: {}\n", Printable(n.pointer), n.message);
    }
  }
  return out;
}

std::string FormatJson(const std::vector<Diagnostic>& diags, std::string_view file) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Diagnostic& d : diags) {
    nlohmann::json notes = nlohmann::json::array();
    for (const Note& n : d.notes) notes.push_back({{"pointer", n.pointer}, {"message", n.message}});
    arr.push_back({{"severity", SeverityName(d.severity)},
                   {"code", d.code},
                   {"file", file},
                   {"pointer", d.pointer},
                   {"message", d.message},
                   {"hint", d.hint},
                   {"notes", std::move(notes)}});
  }
  return arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > 256) return {};  // a pasted blob is no typo; keep this O(small)
  size_t threshold = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_d = threshold + 1;
  for (const std::string& c : candidates) {
    size_t len_gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (len_gap > threshold || c.size() > 256) continue;
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

}  // namespace loadplan::verifier
