#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_client.h"
#include "cli/log_commands.h"

namespace det::cli {

struct CommandRunOptions {
  std::vector<std::string> entrypoint;
  int slots = 1;
  std::string resource_pool;
  std::vector<std::string> env;  // KEY=VALUE
  std::optional<int> priority;   // 1 (most urgent) .. 99; unset: the pool's default
  double weight = 1.0;
  bool preemptible = false;
  bool multi_node = false;  // may span agents (resources.is_single_node: false)
  int max_restarts = 0;     // queued again this often when its agent is lost
  // Where it runs on an agent whose runtime is docker (environment.image, ...).
  std::string image;
  bool force_pull_image = false;
  std::string shm_size;  // "4G"; "": the engine's default
  std::string array;     // a job array's indices ("1-1000"); "": one task
};

// Adds `det cmd run|list|logs|kill` (alias `command`) and `det task list|logs|kill|wait`.
void AddTaskCommands(CLI::App& app, const CliOptions& options, int& rc);

// det cmd run: prints the new task's id.
int CommandRun(const CliOptions& options, const CommandRunOptions& run);
// det task list; det cmd list (`type` COMMAND: only those); `array_id`: only that job array's
// tasks.
int TaskList(const CliOptions& options, const std::string& type = "",
             const std::string& array_id = "");
// det task kill ID
int TaskKill(const CliOptions& options, const std::string& task_id);
// det task logs ID [-f] [--head N | --tail N] [--since T] [--until T]: prints stored lines; with
// follow, keeps printing until the task ended and every line is shown.
int TaskLogs(const CliOptions& options, const std::string& task_id, const LogSelection& selection);
// det task cleanup-logs (admins): log retention now; prints how many lines went.
int CleanupLogs(const CliOptions& options);
// det task wait ID: waits for the task to end and its end (with all its output) to be stored;
// exit code 0 when it succeeded, 1 otherwise.
int TaskWait(const CliOptions& options, const std::string& task_id);

}  // namespace det::cli
