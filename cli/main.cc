// det: the command-line client. Talks to the master's CLI gateway (REQ/REP over ZeroMQ).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/relay.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == det::cli::kRelayArg) {
    return det::cli::RunRelay(argv[2]);
  }
  CLI::App app{"det: drive a det cluster (experiments, agents, the master)"};
  det::cli::CliOptions options = det::cli::OptionsFromEnvironment();
  int rc = 0;
  det::cli::AddCommands(app, options, rc, argc, argv);
  CLI11_PARSE(app, argc, argv);
  return rc;
}
