#include "cli/task_commands.h"

#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/tasks.h"
#include "cli/output.h"
#include "cli/rpc_call.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/index_ranges.h"
#include "common/strings.h"

namespace det::cli {
namespace {

using bus::ToJson;

constexpr auto kPollInterval = std::chrono::milliseconds(200);

}  // namespace

int CommandRun(const CliOptions& options, const CommandRunOptions& run) {
  bus::CommandRunRequest request{run.entrypoint, run.slots, run.resource_pool, {}};
  request.priority = run.priority;
  request.weight = run.weight;
  request.preemptible = run.preemptible;
  request.single_node = !run.multi_node;
  request.max_restarts = run.max_restarts;
  for (const std::string& kv : run.env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(InvalidArgument("--env \"" + kv + "\": expected KEY=VALUE"));
    }
    request.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  request.container.image = run.image;
  request.container.force_pull = run.force_pull_image;
  if (!run.shm_size.empty()) {
    Result<int64_t> bytes = ParseByteSize(run.shm_size);
    if (!bytes.ok()) return Fail(bytes.status().WithContext("--shm-size"));
    request.container.shm_size_bytes = *bytes;
  }
  if (!run.array.empty()) {
    // Checked here too, so that a typo is named before anything is sent.
    Result<std::vector<int64_t>> indices =
        ParseIndexRanges(run.array, bus::CommandRunRequest::kMaxArrayTasks);
    if (!indices.ok()) return Fail(indices.status());
    request.array = run.array;
  }
  auto reply = Call<bus::CommandRunRequest, bus::CommandRunReply>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json answer{{"task_id", reply->task_id}};
    if (reply->array_size > 0) answer["array_size"] = reply->array_size;
    PrintReply(options, answer);
  } else if (reply->array_size > 0) {
    std::cout << "Launched command array " << reply->task_id << " (" << reply->array_size
              << " tasks, ids " << reply->task_id << "_<index>; det cmd list --array "
              << reply->task_id << ")\n";
  } else {
    std::cout << "Launched command (task id: " << reply->task_id << ")\n";
  }
  return 0;
}

int TaskList(const CliOptions& options, const std::string& type, const std::string& array_id) {
  bus::TaskListRequest request;
  request.array_id = array_id;
  auto list = Call<bus::TaskListRequest, bus::TaskList>(options, request);
  if (!list.ok()) return Fail(list.status());
  if (!type.empty()) {
    std::erase_if(list->tasks, [&](const bus::TaskSummary& t) { return t.type != type; });
  }
  if (options.machine_readable()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& t : list->tasks) all.push_back(ToJson(t));
    PrintReply(options, all);
    return 0;
  }
  std::printf("%-38s %-8s %-11s %5s %-16s %-12s %s\n", "TASK ID", "TYPE", "STATE", "SLOTS", "AGENT",
              "RESULT", "ENTRYPOINT");
  for (const auto& t : list->tasks) {
    std::string result;
    if (t.state == "TERMINATED") {
      result = t.failure_type.empty() ? "ok" : t.failure_type;
    }
    std::printf("%-38s %-8s %-11s %5d %-16s %-12s %s\n", t.id.c_str(), t.type.c_str(),
                t.state.c_str(), t.slots, Join(t.agents, " ").c_str(), result.c_str(),
                Join(t.entrypoint, " ").c_str());
  }
  return 0;
}

int TaskKill(const CliOptions& options, const std::string& task_id) {
  auto reply = Call<bus::TaskKillRequest, bus::TaskKillReply>(options, {task_id});
  if (!reply.ok()) return Fail(reply.status());
  if (reply->state.empty()) {
    std::cout << "kill requested for " << reply->array_tasks_stopped
              << " unfinished task(s) of array " << task_id << "\n";
  } else {
    std::cout << "kill requested; task " << task_id << " is " << reply->state << "\n";
  }
  return 0;
}

int TaskLogs(const CliOptions& options, const std::string& task_id, const LogSelection& selection) {
  LogPrinter printer(options, selection, /*skip_unknown=*/false);
  const std::vector<LogSource> sources = {{task_id, ""}};
  auto ended = printer.Print(sources);
  while (ended.ok() && selection.follow && !*ended && !printer.head_done()) {
    std::this_thread::sleep_for(kPollInterval);
    ended = printer.Follow(sources);
  }
  return ended.ok() ? 0 : Fail(ended.status());
}

int CleanupLogs(const CliOptions& options) {
  auto reply = Call<bus::TaskCleanupLogsRequest, bus::TaskCleanupLogsReply>(options, {});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, nlohmann::ordered_json{{"lines_removed", reply->lines_removed},
                                               {"log_retention_days", reply->log_retention_days}});
  } else if (reply->log_retention_days < 0) {
    std::cout << "removed " << reply->lines_removed
              << " log lines (the cluster keeps logs forever; experiments may set their own "
                 "retention_policy.log_retention_days)\n";
  } else {
    std::cout << "removed " << reply->lines_removed << " log lines of tasks that ended "
              << reply->log_retention_days << " or more days ago\n";
  }
  return 0;
}

// Whether the task's end is in the database, and with it every line of its output. Asked once
// the registry says the task ended: a task the database does not hold yet (its writes lag behind
// a task that ended at once) is not recorded yet, not unknown.
Result<bool> EndRecorded(const CliOptions& options, const std::string& task_id) {
  auto reply = Call<bus::TaskLogsRequest, bus::TaskLogsReply>(
      options, {task_id, std::numeric_limits<int64_t>::max(), 1});
  if (reply.status().code() == StatusCode::kNotFound) return false;
  if (!reply.ok()) return reply.status();
  return reply->task_ended;
}

int TaskWait(const CliOptions& options, const std::string& task_id) {
  while (true) {
    auto reply = Call<bus::TaskGetRequest, bus::TaskGetReply>(options, {task_id});
    if (!reply.ok()) return Fail(reply.status());
    const bus::TaskSummary& t = reply->task;
    auto recorded = t.state == "TERMINATED" ? EndRecorded(options, task_id) : Result<bool>(false);
    if (!recorded.ok()) return Fail(recorded.status());
    if (*recorded) {
      if (options.machine_readable()) {
        PrintReply(options, ToJson(t));
      } else {
        std::cout << "task " << t.id << " TERMINATED: "
                  << (t.failure_type.empty() ? "succeeded" : t.failure_type + ": " + t.message)
                  << " (exit code " << t.exit_code << ")\n";
      }
      return t.failure_type.empty() ? 0 : 1;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

namespace {

void AddCommandRun(CLI::App& cmd, const CliOptions& options, int& rc) {
  auto run = std::make_shared<CommandRunOptions>();
  auto* sub = cmd.add_subcommand("run", "run ENTRYPOINT... (one argument: through /bin/sh -c)");
  sub->add_option("entrypoint", run->entrypoint, "the program and its arguments")->required();
  sub->add_option("--slots", run->slots, "slots to use (default 1)");
  sub->add_option("--resource-pool", run->resource_pool,
                  "resource pool (default: the master's default compute pool, or aux pool for 0 "
                  "slots)");
  sub->add_option("--priority", run->priority, "1 (most urgent) to 99 (default: the pool's)")
      ->check(CLI::Range(1, 99));
  sub->add_option("--weight", run->weight, "fair-share weight (default 1)");
  sub->add_flag("--preemptible", run->preemptible,
                "may be stopped for more urgent work (SIGTERM, SIGKILL after the pool's "
                "preemption_timeout) and run again later");
  sub->add_flag("--multi-node", run->multi_node, "may span several agents (is_single_node: false)");
  sub->add_option("--max-restarts", run->max_restarts,
                  "times it is queued again when its agent is lost (a spot instance taken back, a "
                  "host that died) instead of ending AgentFailed (default 0)")
      ->check(CLI::Range(0, bus::CommandRunRequest::kMaxRestartsLimit));
  sub->add_option("-e,--env", run->env, "KEY=VALUE for the command's environment");
  sub->add_option("--image", run->image,
                  "the container image it runs in on agents whose runtime is docker");
  sub->add_flag("--force-pull-image", run->force_pull_image,
                "pull the image even when the agent has it");
  sub->add_option("--shm-size", run->shm_size, "size of /dev/shm in its container (e.g. 4G)");
  sub->add_option("--array", run->array,
                  "a job array: one task per index (\"1-1000\", \"0-15:4\", \"1,3,5-7\"; at most "
                  "10,000), each its own job, told DET_ARRAY_INDEX and DET_ARRAY_ID; kill or list "
                  "them all by the array's id, or one by <array id>_<index>");
  sub->prefix_command(false);
  sub->callback([&options, &rc, run] { rc = CommandRun(options, *run); });
}

// `logs`, `kill` (and `wait` when `with_wait`) of one task, under `parent`.
void AddTaskIdCommands(CLI::App& parent, const CliOptions& options, int& rc, const char* noun,
                       bool with_wait) {
  auto task_id = std::make_shared<std::string>();
  auto selection = std::make_shared<LogSelection>();
  auto* logs = parent.add_subcommand("logs", std::string("a ") + noun + "'s output");
  logs->add_option("task_id", *task_id, std::string("the ") + noun)->required();
  AddLogSelectionOptions(logs, selection, "keep printing until it ends");
  logs->callback(
      [&options, &rc, task_id, selection] { rc = TaskLogs(options, *task_id, *selection); });
  auto* kill =
      parent.add_subcommand("kill", std::string("stop a ") + noun +
                                        " (SIGTERM, then SIGKILL), or every task of a job array");
  kill->add_option("task_id", *task_id, std::string("the ") + noun + ", or a job array's id")
      ->required();
  kill->callback([&options, &rc, task_id] { rc = TaskKill(options, *task_id); });
  if (!with_wait) return;
  auto* wait = parent.add_subcommand("wait", "wait for a task to end; exit 0 if it succeeded");
  wait->add_option("task_id", *task_id, "the task")->required();
  wait->callback([&options, &rc, task_id] { rc = TaskWait(options, *task_id); });
}

}  // namespace

void AddTaskCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* cmd = app.add_subcommand("cmd", "commands: run a program on the cluster's slots");
  cmd->alias("command")->require_subcommand(1);
  AddCommandRun(*cmd, options, rc);
  auto array_id = std::make_shared<std::string>();
  auto* list = cmd->add_subcommand("list", "commands, oldest first");
  list->add_option("--array", *array_id, "only this job array's tasks, by index");
  list->callback([&options, &rc, array_id] { rc = TaskList(options, "COMMAND", *array_id); });
  AddTaskIdCommands(*cmd, options, rc, "command", false);
  auto* task = app.add_subcommand("task", "tasks: what runs on the cluster")->require_subcommand(1);
  task->add_subcommand("list", "tasks, oldest first")->callback([&] { rc = TaskList(options); });
  AddTaskIdCommands(*task, options, rc, "task", true);
  task->add_subcommand("cleanup-logs",
                       "admins: run log retention now (master.yaml retention_policy)")
      ->callback([&] { rc = CleanupLogs(options); });
}

}  // namespace det::cli
