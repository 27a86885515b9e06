// Completion scripts rendered from a CompletionSpec: every command, option and choice appears.
#include "cli/completion.h"

#include <gtest/gtest.h>

namespace loadplan::cli {
namespace {

CompletionSpec Spec() {
  return {.global_options = {{.names = {"-h", "--help"}, .description = "Print help"}},
          .commands = {{.name = "check",
                        .description = "Verify: manifests",
                        .options = {{.names = {"--format"},
                                     .description = "Output [format]",
                                     .takes_value = true,
                                     .choices = {"text", "json"}}}},
                       {.name = "example",
                        .description = "Examples",
                        .positional_choices = {"tiny", "k3-stage"}}}};
}

TEST(Completion, BashListsCommandsOptionsAndChoices) {
  const std::string bash = CompletionScript(Spec(), "bash").value();
  EXPECT_NE(bash.find("complete -o filenames -F _loadplan loadplan"), std::string::npos);
  EXPECT_NE(bash.find("check example"), std::string::npos);
  EXPECT_NE(bash.find("--format) COMPREPLY=($(compgen -W \"text json\""), std::string::npos)
      << bash;
  EXPECT_NE(bash.find("compgen -W \"tiny k3-stage\""), std::string::npos) << bash;
}

TEST(Completion, ZshEscapesDescriptions) {
  const std::string zsh = CompletionScript(Spec(), "zsh").value();
  EXPECT_EQ(zsh.rfind("#compdef loadplan\n", 0), 0u);
  EXPECT_NE(zsh.find("'check:Verify\\: manifests'"), std::string::npos) << zsh;
  EXPECT_NE(zsh.find("'--format[Output \\[format\\]]:value:(text json)'"), std::string::npos)
      << zsh;
  EXPECT_NE(zsh.find("'1:name:(tiny k3-stage)'"), std::string::npos) << zsh;
  EXPECT_FALSE(CompletionScript(Spec(), "fish"));
}

}  // namespace
}  // namespace loadplan::cli
