// det: the command-line client. Talks to the master's CLI gateway (REQ/REP over ZeroMQ).
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"det: drive a det cluster (experiments, agents, the master)"};
  det::cli::CliOptions options = det::cli::OptionsFromEnvironment();
  int rc = 0;
  det::cli::AddCommands(app, options, rc, argc, argv);
  CLI11_PARSE(app, argc, argv);
  return rc;
}
