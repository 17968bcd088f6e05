#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det autoscaler status`, `det autoscaler instances [--resource-pool P] [--all]` and
// `det autoscaler decisions [--resource-pool P] [--limit N]` to `app`; their exit status goes to
// `rc`.
void AddAutoscalerCommands(CLI::App& app, const CliOptions& options, int& rc);

}  // namespace det::cli
