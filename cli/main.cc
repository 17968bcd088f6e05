// det: the command-line client. Talks to the master's CLI gateway (REQ/REP over ZeroMQ).
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/cli_client.h"
#include "common/version.h"

namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"det: drive a det cluster (experiments, agents, the master)"};
  app.require_subcommand(1);
  det::cli::CliOptions options;
  options.master = EnvOr("DET_MASTER", options.master);
  options.security.key_file = EnvOr("DET_KEY_FILE", "");
  options.security.server_public_key_file = EnvOr("DET_MASTER_KEY_FILE", "");
  options.security.plaintext = EnvOr("DET_PLAINTEXT", "") == "1";
  app.set_version_flag("--version", std::string("det ") + det::kVersion);
  app.add_option("-m,--master", options.master, "master gateway host:port (env DET_MASTER)");
  app.add_option("--key-file", options.security.key_file, "your CURVE key pair (env DET_KEY_FILE)");
  app.add_option("--master-key-file", options.security.server_public_key_file,
                 "the master's public key file (env DET_MASTER_KEY_FILE)");
  app.add_flag("--plaintext", options.security.plaintext,
               "talk without CURVE (env DET_PLAINTEXT=1)");
  app.add_flag("--json", options.json, "print machine-readable JSON");

  int rc = 0;
  auto* master = app.add_subcommand("master", "the master")->require_subcommand(1);
  master->add_subcommand("info", "version and identity of the master")->callback([&] {
    rc = det::cli::MasterInfo(options);
  });
  auto* agent = app.add_subcommand("agent", "agents")->require_subcommand(1);
  agent->add_subcommand("list", "agents and their slots")->callback([&] {
    rc = det::cli::AgentList(options);
  });
  std::string base;
  auto* keygen = app.add_subcommand("keygen", "create a CURVE key pair: NAME.key and NAME.pub");
  keygen->add_option("name", base, "path prefix of the key files")->required();
  keygen->callback([&] { rc = det::cli::KeyGen(base); });
  CLI11_PARSE(app, argc, argv);
  return rc;
}
