// ANSI colour for diagnostic text on terminals.
#include "cli/colour.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace loadplan::cli {
namespace {

constexpr std::string_view kReset = "\033[0m";

// Colours `word` at its first occurrence between `before` and `after` in `line`.
bool Paint(std::string& line, std::string_view before, std::string_view word,
           std::string_view after, std::string_view colour) {
  size_t at = line.find(std::string(before) + std::string(word) + std::string(after));
  if (at == std::string::npos) return false;
  at += before.size();
  line.insert(at + word.size(), kReset);
  line.insert(at, colour);
  return true;
}

}  // namespace

bool ColourWanted(bool is_tty, const char* no_color) {
  return is_tty && (no_color == nullptr || *no_color == '\0');
}

bool UseColour(std::FILE* stream) {
  return ColourWanted(::isatty(::fileno(stream)) == 1, std::getenv("NO_COLOR"));
}

std::string Colourise(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(begin, end - begin);
    if (line.starts_with("  hint:")) {
      Paint(line, "  ", "hint", ":", "\033[36m");
    } else if (line.starts_with("  note:")) {
      Paint(line, "  ", "note", ":", "\033[1m");
    } else if (!Paint(line, ": ", "error", "[", "\033[1;31m")) {
      Paint(line, ": ", "warning", "[", "\033[1;33m");
    }
    out += line;
    begin = end;
  }
  return out;
}

void PrintDiagnostics(const std::string& text, std::FILE* stream) {
  std::fputs(UseColour(stream) ? Colourise(text).c_str() : text.c_str(), stream);
}

}  // namespace loadplan::cli
