// Diagnostics: what a rule reports about a manifest (code, JSON pointer, message, hint, notes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loadplan::verifier {

enum class Severity : uint8_t { kError, kWarning };

// A related place: "written here", "declared here".
struct Note {
  std::string pointer;
  std::string message;
  bool operator==(const Note&) const = default;
};

// One problem. `code` is a stable rule id from docs/verifier.md (S4, K2, ...);
// `pointer` is an RFC 6901 JSON pointer to the offending use (escaped: ~0, ~1).
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;
  std::string pointer;
  std::string message;
  std::string hint;  // empty when there is no one-line fix
  std::vector<Note> notes;
  bool operator==(const Diagnostic&) const = default;
};

// Rules push here and never stop the run: all problems of a manifest in one pass.
class DiagSink {
 public:
  void Report(Diagnostic d) { diags_.push_back(std::move(d)); }
  void Error(std::string code, std::string pointer, std::string message, std::string hint = {},
             std::vector<Note> notes = {});
  void Warning(std::string code, std::string pointer, std::string message, std::string hint = {},
               std::vector<Note> notes = {});
  [[nodiscard]] bool HasErrors() const;
  [[nodiscard]] size_t ErrorCount() const;
  // Sorted by pointer (array indices compared as numbers), then code, then message.
  [[nodiscard]] std::vector<Diagnostic> Sorted() const;
  [[nodiscard]] const std::vector<Diagnostic>& All() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

// Pointer helpers. Escape one reference token (~ -> ~0, / -> ~1).
std::string EscapePointerToken(std::string_view token);
// Append one token: Child("/buffers", "a/b") == "/buffers/a~1b".
std::string ChildPointer(std::string_view parent, std::string_view token);
// Appends `token` escaped for a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1") to `out`.
void AppendEscaped(std::string& out, std::string_view token);
std::string ChildPointer(std::string_view parent, size_t index);
// Orders pointers token by token, numeric tokens as numbers; true when a < b.
bool PointerLess(std::string_view a, std::string_view b);

// Text: `file: error[P4] /programs/x/calls/2: message` + hint + indented notes.
std::string FormatText(const std::vector<Diagnostic>& diags, std::string_view file);
// JSON array of {severity, code, file, pointer, message, hint, notes}.
std::string FormatJson(const std::vector<Diagnostic>& diags, std::string_view file);

// Nearest candidate by edit distance, or empty when none is close enough.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace loadplan::verifier
