// det: the command-line client. Talks to the master's CLI gateway (REQ/REP over ZeroMQ).
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/agent_commands.h"
#include "cli/autoscaler_commands.h"
#include "cli/cli_client.h"
#include "cli/completion.h"
#include "cli/deploy_local.h"
#include "cli/experiment_commands.h"
#include "cli/job_commands.h"
#include "cli/task_commands.h"
#include "cli/user_commands.h"
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
  options.user = EnvOr("DET_USER", "");
  options.password = EnvOr("DET_PASS", "");
  options.token = EnvOr("DET_USER_TOKEN", "");
  app.set_version_flag("--version", std::string("det ") + det::kVersion);
  app.add_option("-m,--master", options.master, "master gateway host:port (env DET_MASTER)");
  app.add_option("--key-file", options.security.key_file, "your CURVE key pair (env DET_KEY_FILE)");
  app.add_option("--master-key-file", options.security.server_public_key_file,
                 "the master's public key file (env DET_MASTER_KEY_FILE)");
  app.add_flag("--plaintext", options.security.plaintext,
               "talk without CURVE (env DET_PLAINTEXT=1)");
  app.add_flag("--json", options.json, "print machine-readable JSON");
  app.add_flag("--csv", options.csv, "print machine-readable comma-separated values");
  app.add_option("-u,--user", options.user, "whose login session to use (env DET_USER)");

  int rc = 0;
  auto* master = app.add_subcommand("master", "the master")->require_subcommand(1);
  master->add_subcommand("info", "version and identity of the master")->callback([&] {
    rc = det::cli::MasterInfo(options);
  });
  bool follow_master = false;
  auto* master_logs = master->add_subcommand("logs", "the master's recent log lines (admins)");
  master_logs->add_flag("-f,--follow", follow_master, "keep printing new lines");
  master_logs->callback([&] { rc = det::cli::MasterLogs(options, follow_master); });
  auto* agent = app.add_subcommand("agent", "agents")->require_subcommand(1);
  agent->add_subcommand("list", "agents and their slots")->callback([&] {
    rc = det::cli::AgentList(options);
  });
  std::string agent_id, slot_id;
  bool drain = false;
  auto* agent_enable = agent->add_subcommand("enable", "let an agent take new work");
  agent_enable->add_option("agent_id", agent_id, "the agent")->required();
  agent_enable->callback([&] { rc = det::cli::AgentEnable(options, agent_id, true, false); });
  auto* agent_disable =
      agent->add_subcommand("disable", "give an agent no new work; kill its tasks unless --drain");
  agent_disable->add_option("agent_id", agent_id, "the agent")->required();
  agent_disable->add_flag("--drain", drain, "let running tasks finish");
  agent_disable->callback([&] { rc = det::cli::AgentEnable(options, agent_id, false, drain); });
  auto* slot = app.add_subcommand("slot", "slots of an agent")->require_subcommand(1);
  auto* slot_list = slot->add_subcommand("list", "every agent's slots, or one agent's");
  slot_list->add_option("agent_id", agent_id, "only this agent");
  slot_list->callback([&] { rc = det::cli::SlotList(options, agent_id); });
  auto* pool = app.add_subcommand("resource-pool", "resource pools")->require_subcommand(1);
  pool->add_subcommand("list", "pools, their schedulers and slots")->callback([&] {
    rc = det::cli::ResourcePoolList(options);
  });
  for (bool enable : {true, false}) {
    auto* sub =
        slot->add_subcommand(enable ? "enable" : "disable",
                             enable ? "let a slot take new work" : "give a slot no new work");
    sub->add_option("agent_id", agent_id, "the agent")->required();
    sub->add_option("slot_id", slot_id, "the slot")->required();
    sub->callback([&, enable] { rc = det::cli::SlotEnable(options, agent_id, slot_id, enable); });
  }
  det::cli::CommandRunOptions run;
  auto* cmd = app.add_subcommand("cmd", "commands: run a program on the cluster's slots");
  cmd->alias("command")->require_subcommand(1);
  auto* cmd_run =
      cmd->add_subcommand("run", "run ENTRYPOINT... (one argument: through /bin/sh -c)");
  cmd_run->add_option("entrypoint", run.entrypoint, "the program and its arguments")->required();
  cmd_run->add_option("--slots", run.slots, "slots to use (default 1)");
  cmd_run->add_option("--resource-pool", run.resource_pool,
                      "resource pool (default: the master's default compute pool, or aux pool "
                      "for 0 slots)");
  cmd_run->add_option("--priority", run.priority, "1 (most urgent) to 99 (default: the pool's)")
      ->check(CLI::Range(1, 99));
  cmd_run->add_option("--weight", run.weight, "fair-share weight (default 1)");
  cmd_run->add_flag("--preemptible", run.preemptible,
                    "may be stopped for more urgent work (SIGTERM, SIGKILL after the pool's "
                    "preemption_timeout) and run again later");
  cmd_run->add_flag("--multi-node", run.multi_node,
                    "may span several agents (is_single_node: false)");
  cmd_run->add_option("-e,--env", run.env, "KEY=VALUE for the command's environment");
  cmd_run->add_option("--image", run.image,
                      "the container image it runs in on agents whose runtime is docker");
  cmd_run->add_flag("--force-pull-image", run.force_pull_image,
                    "pull the image even when the agent has it");
  cmd_run->add_option("--shm-size", run.shm_size, "size of /dev/shm in its container (e.g. 4G)");
  cmd_run->prefix_command(false);
  cmd_run->callback([&] { rc = det::cli::CommandRun(options, run); });

  std::string task_id;
  bool follow = false;
  cmd->add_subcommand("list", "commands, oldest first")->callback([&] {
    rc = det::cli::TaskList(options, "COMMAND");
  });
  auto* cmd_logs = cmd->add_subcommand("logs", "a command's output");
  cmd_logs->add_option("task_id", task_id, "the command's task id")->required();
  cmd_logs->add_flag("-f,--follow", follow, "keep printing until it ends");
  cmd_logs->callback([&] { rc = det::cli::TaskLogs(options, task_id, follow); });
  auto* cmd_kill = cmd->add_subcommand("kill", "stop a command (SIGTERM, then SIGKILL)");
  cmd_kill->add_option("task_id", task_id, "the command's task id")->required();
  cmd_kill->callback([&] { rc = det::cli::TaskKill(options, task_id); });
  auto* task = app.add_subcommand("task", "tasks: what runs on the cluster")->require_subcommand(1);
  task->add_subcommand("list", "tasks, oldest first")->callback([&] {
    rc = det::cli::TaskList(options);
  });
  auto* logs = task->add_subcommand("logs", "a task's output");
  logs->add_option("task_id", task_id, "the task")->required();
  logs->add_flag("-f,--follow", follow, "keep printing until the task ends");
  logs->callback([&] { rc = det::cli::TaskLogs(options, task_id, follow); });
  auto* kill = task->add_subcommand("kill", "stop a task (SIGTERM, then SIGKILL)");
  kill->add_option("task_id", task_id, "the task")->required();
  kill->callback([&] { rc = det::cli::TaskKill(options, task_id); });
  auto* wait = task->add_subcommand("wait", "wait for a task to end; exit 0 if it succeeded");
  wait->add_option("task_id", task_id, "the task")->required();
  wait->callback([&] { rc = det::cli::TaskWait(options, task_id); });

  det::cli::AddJobCommands(app, options, rc);
  det::cli::AddExperimentCommands(app, options, rc);
  det::cli::AddUserCommands(app, options, rc);
  det::cli::AddDeployCommands(app, options, rc);
  det::cli::AddAutoscalerCommands(app, options, rc);
  det::cli::AddCompletionCommand(app, rc);  // last: it lists every command above

  std::string base;
  auto* keygen = app.add_subcommand("keygen", "create a CURVE key pair: NAME.key and NAME.pub");
  keygen->add_option("name", base, "path prefix of the key files")->required();
  keygen->callback([&] { rc = det::cli::KeyGen(base); });
  CLI11_PARSE(app, argc, argv);
  return rc;
}
