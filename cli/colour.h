// Colour for diagnostics on a terminal: on when the stream is a tty and NO_COLOR is unset or
// empty (https://no-color.org), off otherwise, so pipes, files and tests see plain text.
#pragma once

#include <cstdio>
#include <string>

namespace loadplan::cli {

// The decision, from its two inputs (for tests).
bool ColourWanted(bool is_tty, const char* no_color);
// For one stream: ColourWanted(isatty(fileno(stream)), getenv("NO_COLOR")).
bool UseColour(std::FILE* stream);

// Diagnostic text (verifier::FormatText) with ANSI colour: "error" bold red, "warning" bold
// yellow, "hint:" cyan, "note:" bold. Only the first such word of each line is coloured.
std::string Colourise(const std::string& diagnostics_text);

// FormatText output to `stream`, coloured when UseColour(stream).
void PrintDiagnostics(const std::string& diagnostics_text, std::FILE* stream);

}  // namespace loadplan::cli
