#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// The options every command shares, from the environment (DET_MASTER, DET_KEY_FILE,
// DET_MASTER_KEY_FILE, DET_PLAINTEXT=1, DET_USER, DET_PASS, DET_USER_TOKEN).
CliOptions OptionsFromEnvironment();

// Adds the global options (which override the environment in `options`) and the commands to
// `app`. Only the command group that the command line names is built (a `det cmd run` builds a few
// dozen options instead of every command's); help, completion and a name det does not know build
// them all. Each command's callback sets `rc` to the exit code.
void AddCommands(CLI::App& app, CliOptions& options, int& rc, int argc, const char* const* argv);

}  // namespace det::cli
