// Colour of diagnostics: the tty / NO_COLOR decision and the ANSI painting of FormatText lines.
#include "cli/colour.h"

#include <gtest/gtest.h>

namespace loadplan::cli {
namespace {

TEST(Colour, OnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(ColourWanted(true, nullptr));
  EXPECT_TRUE(ColourWanted(true, ""));  // no-color.org: set and non-empty disables
  EXPECT_FALSE(ColourWanted(true, "1"));
  EXPECT_FALSE(ColourWanted(false, nullptr));
}

TEST(Colour, PaintsSeverityHintAndNote) {
  const std::string text =
      "m.json: error[K2] /programs/p: source written\n  hint: write a carry\n  note: /buffers/a: "
      "declared here\n"
      "m.json: warning[L2] /buffers/b: unread\n";
  EXPECT_EQ(Colourise(text),
            "m.json: \033[1;31merror\033[0m[K2] /programs/p: source written\n  "
            "\033[36mhint\033[0m: write a carry\n"
            "  \033[1mnote\033[0m: /buffers/a: declared here\nm.json: \033[1;33mwarning\033[0m[L2] "
            "/buffers/b: unread\n");
  EXPECT_EQ(Colourise("no diagnostics\n"), "no diagnostics\n");
}

}  // namespace
}  // namespace loadplan::cli
