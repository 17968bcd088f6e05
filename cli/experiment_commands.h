#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det experiment create CONFIG [MODEL_DIR]`, `list`, `describe ID`, `pause|activate|cancel|
// kill ID`, `wait ID`, and `det trial describe ID`, `det trial logs ID [-f]` to `app`; their exit
// status goes to `rc`.
void AddExperimentCommands(CLI::App& app, const CliOptions& options, int& rc);

}  // namespace det::cli
