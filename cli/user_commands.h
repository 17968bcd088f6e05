#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det user login [USERNAME]|logout|whoami|list|create USERNAME [--admin]|change-password
// [USERNAME]|activate USERNAME|deactivate USERNAME` and `det token create|list|revoke` to `app`;
// their exit status goes to `rc`. Passwords are asked for on the terminal (without echo), or read
// as one line from standard input when it is not a terminal; `user login` takes DET_PASS first.
void AddUserCommands(CLI::App& app, CliOptions& options, int& rc);

}  // namespace det::cli
