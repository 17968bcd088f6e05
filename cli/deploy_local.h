#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Adds `det deploy local up|down|status` to `app`: a whole cluster on this host, kept in one
// folder (--cluster-dir; default $XDG_DATA_HOME/det/local or ~/.local/share/det/local):
//
//   up      CURVE keys and an admin password made at the first start; det-master with its private
//           PostgreSQL (data under the folder) and det-autoscaler, whose local provider starts
//           up to --max-agents det-agents (default 4) as work waits and stops them when idle;
//           or, with --agents N, N agents kept running (and no autoscaled ones unless
//           --max-agents says so). Each a background process with its log in the folder; waits
//           until the static agents joined, then prints the REST/WebUI address, the admin
//           credentials and the environment for det.
//   down    stops what `up` started, and the agents the autoscaler started (the master stops its
//           PostgreSQL); the data stays unless --delete-data.
//   status  which processes run, and the master's view of its agents.
//
// Their exit status goes to `rc`.
void AddDeployCommands(CLI::App& app, CliOptions& options, int& rc);

}  // namespace det::cli
