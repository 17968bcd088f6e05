#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace det::cli {

// A bash completion script for `app` (its subcommands and options at every level), for
// `source <(det completion bash)`; zsh takes it after `autoload bashcompinit && bashcompinit`.
std::string BashCompletion(const CLI::App& app);

// Adds `det completion bash` to `app`: prints BashCompletion of the whole command tree.
void AddCompletionCommand(CLI::App& app, int& rc);

}  // namespace det::cli
