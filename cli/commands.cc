#include "cli/commands.h"

#include <cstdlib>
#include <functional>
#include <string_view>
#include <vector>

#include "cli/autoscaler_commands.h"
#include "cli/cluster_commands.h"
#include "cli/completion.h"
#include "cli/deploy_local.h"
#include "cli/experiment_commands.h"
#include "cli/job_commands.h"
#include "cli/task_commands.h"
#include "cli/user_commands.h"
#include "common/version.h"

namespace det::cli {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// Global options that take a value (so the word after them is not a command's name).
constexpr std::string_view kValueOptions[] = {"-m", "--master", "--key-file", "--master-key-file",
                                              "-u", "--user"};

void AddGlobalOptions(CLI::App& app, CliOptions& options) {
  app.set_version_flag("--version", std::string("det ") + kVersion);
  app.add_option("-m,--master", options.master,
                 "the master's REST address, as at Determined: host:port or http(s)://host:port "
                 "(or its gateway: tcp://host:port); env DET_MASTER")
      ->envname("DET_MASTER")
      ->transform(
          [](const std::string& given) {
            Result<std::string> canonical = CanonicalMaster(given);
            if (!canonical.ok()) throw CLI::ValidationError(canonical.status().message());
            return *canonical;
          },
          "", "master address");
  app.add_option("--key-file", options.security.key_file, "your CURVE key pair (env DET_KEY_FILE)");
  app.add_option("--master-key-file", options.security.server_public_key_file,
                 "the master's public key file (env DET_MASTER_KEY_FILE)");
  app.add_flag("--plaintext", options.security.plaintext,
               "talk without CURVE (env DET_PLAINTEXT=1)");
  app.add_flag("--json", options.json, "print machine-readable JSON");
  app.add_flag("--csv", options.csv, "print machine-readable comma-separated values");
  app.add_option("-u,--user", options.user, "whose login session to use (env DET_USER)");
}

using AddGroup = std::function<void(CLI::App&, CliOptions&, int&)>;

struct CommandGroup {
  std::vector<std::string_view> names;  // the top-level words (and aliases) it adds
  AddGroup add;
};

const std::vector<CommandGroup>& Groups() {
  static const std::vector<CommandGroup> groups = {
      {{"master", "keygen"}, AddMasterCommands},
      {{"agent", "slot", "resource-pool"}, AddAgentCommands},
      {{"cmd", "command", "task"}, AddTaskCommands},
      {{"job"}, AddJobCommands},
      {{"experiment", "e", "trial", "t"}, AddExperimentCommands},
      {{"user", "token"}, AddUserCommands},
      {{"deploy"}, AddDeployCommands},
      {{"autoscaler"}, AddAutoscalerCommands},
  };
  return groups;
}

// The first word of the command line that is not a global option or its value ("" if none);
// "--version" when that comes first (it needs no command at all).
std::string_view CommandWord(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return "";
    if (arg == "--version") return arg;
    if (!arg.starts_with("-")) return arg;
    for (std::string_view option : kValueOptions) {
      if (arg == option) ++i;  // its value follows
    }
  }
  return "";
}

}  // namespace

CliOptions OptionsFromEnvironment() {
  CliOptions options;
  // DET_MASTER: read with -m (AddGlobalOptions), in the same form.
  options.security.key_file = EnvOr("DET_KEY_FILE", "");
  options.security.server_public_key_file = EnvOr("DET_MASTER_KEY_FILE", "");
  options.security.plaintext = EnvOr("DET_PLAINTEXT", "") == "1";
  options.user = EnvOr("DET_USER", "");
  options.password = EnvOr("DET_PASS", "");
  options.token = EnvOr("DET_USER_TOKEN", "");
  return options;
}

void AddCommands(CLI::App& app, CliOptions& options, int& rc, int argc, const char* const* argv) {
  app.require_subcommand(1);
  AddGlobalOptions(app, options);
  const std::string_view word = CommandWord(argc, argv);
  if (word == "--version") return;
  for (const CommandGroup& group : Groups()) {
    for (std::string_view name : group.names) {
      if (name == word) {
        group.add(app, options, rc);
        return;
      }
    }
  }
  for (const CommandGroup& group : Groups()) group.add(app, options, rc);
  AddCompletionCommand(app, rc);  // last: it lists every command above
}

}  // namespace det::cli
