#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det job list [--resource-pool P]` and `det job update JOB_ID [--priority N]
// [--weight W] [--resource-pool P]` to `app`; their exit status goes to `rc`.
void AddJobCommands(CLI::App& app, const CliOptions& options, int& rc);

}  // namespace det::cli
