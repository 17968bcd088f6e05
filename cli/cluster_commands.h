#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det master info|logs [-f]` and `det keygen NAME`.
void AddMasterCommands(CLI::App& app, const CliOptions& options, int& rc);
// Adds `det agent list|enable|disable`, `det slot list|enable|disable` and
// `det resource-pool list`.
void AddAgentCommands(CLI::App& app, const CliOptions& options, int& rc);

}  // namespace det::cli
