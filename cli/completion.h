// Shell completion scripts (bash, zsh) rendered from a plain description of the command line,
// which cli/main.cc fills by walking CLI11's App tree (so the scripts never list by hand).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loadplan::cli {

struct CompletionOption {
  std::vector<std::string> names;  // "--format", "-o"
  std::string description;
  bool takes_value = false;
  std::vector<std::string> choices;  // known values ("text", "json"), else files are offered
};

struct CompletionCommand {
  std::string name;
  std::string description;
  std::vector<CompletionOption> options;
  std::vector<std::string> positional_choices;  // e.g. the example names; empty: files
};

struct CompletionSpec {
  std::string program = "loadplan";
  std::vector<CompletionOption> global_options;  // --help, --version
  std::vector<CompletionCommand> commands;
};

// The script for `shell` ("bash" or "zsh"); nullopt for another shell.
std::optional<std::string> CompletionScript(const CompletionSpec& spec, const std::string& shell);

}  // namespace loadplan::cli
