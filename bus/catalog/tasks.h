#pragma once

// Gateway methods for tasks: generic commands, their states, kill, and their logs.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "bus/codec.h"

namespace det::bus {

// Method "command.run": run `entrypoint` on `slots` slots of `resource_pool`.
struct CommandRunRequest {
  static constexpr std::string_view kType = "command.run";
  std::vector<std::string> entrypoint;
  int32_t slots = 1;
  std::string resource_pool;  // empty: the default pool (compute, or aux for 0 slots)
  std::map<std::string, std::string> env;
  std::optional<int32_t> priority;  // 1 (most urgent) .. 99; unset: the pool's default
  double weight = 1.0;              // fair share
  bool preemptible = false;         // may be stopped (SIGTERM, then SIGKILL after the pool's
                                    // preemption_timeout) for more urgent work, and run again later
  bool single_node = true;          // resources.is_single_node: never spread over several agents
  std::optional<int32_t> max_slots;  // the job's cap on slots held at once (fair share, demand)
  // Times it is queued again when the agent it runs on is lost (a spot instance taken back, a
  // host that died) instead of ending AgentFailed; 0: never.
  int32_t max_restarts = 0;
  static constexpr int32_t kMaxRestartsLimit = 1000;
  ContainerSpec container;  // where it runs on an agent whose runtime is docker
  // Whom it runs as on its agent: set by the master from its submitter (their link, else
  // security.default_task); what a client sends here is replaced.
  std::optional<AgentUserGroup> run_as;
  // A job array (common/index_ranges.h: "1-1000", "0-15:4", "1,3,5-7"): one task per index, each
  // its own job in the queue and told DET_ARRAY_ID and DET_ARRAY_INDEX. "": one task.
  std::string array;
  static constexpr size_t kMaxArrayTasks = 10'000;
  // Who submitted it (set by the master from the caller, as run_as is) and what it is for.
  std::string owner;
  std::string description;
  bool operator==(const CommandRunRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("entrypoint", s.entrypoint, kRequired);
    v("array", s.array);
    v("slots", s.slots);
    v("resource_pool", s.resource_pool);
    v("env", s.env);
    v("priority", s.priority);
    v("weight", s.weight);
    v("preemptible", s.preemptible);
    v("single_node", s.single_node);
    v("max_slots", s.max_slots);
    v("max_restarts", s.max_restarts);
    v("container", s.container);
    v("run_as", s.run_as);
    v("owner", s.owner);
    v("description", s.description);
  }
};

struct CommandRunReply {
  static constexpr std::string_view kType = "command.run.reply";
  std::string task_id;     // an array's id for an array: its tasks are "<array id>_<index>"
  int64_t array_size = 0;  // tasks of the array (0: not an array)
  bool operator==(const CommandRunReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
    v("array_size", s.array_size);
  }
};

// Method "task.submit" (inproc, from the experiment service): a task whose id, type and job the
// caller names. Submitting an id the registry already knows changes nothing and answers that id
// (a retried call).
struct TaskSubmitRequest {
  static constexpr std::string_view kType = "task.submit";
  std::string task_id;
  std::string type;    // TRIAL, ...
  std::string job_id;  // tasks of one job share its queue place (an experiment's trials)
  CommandRunRequest spec;
  bool operator==(const TaskSubmitRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
    v("type", s.type, kRequired);
    v("job_id", s.job_id, kRequired);
    v("spec", s.spec, kRequired);
  }
};

struct TaskSummary {
  std::string id;
  std::string type;
  std::string state;  // QUEUED, then the workload states (ASSIGNED ... TERMINATED)
  std::string resource_pool;
  int32_t slots = 0;
  std::vector<std::string> agents;
  std::vector<std::string> entrypoint;
  int32_t exit_code = 0;
  std::string failure_type;
  std::string message;
  int64_t submitted_at = 0;  // Unix nanoseconds
  int64_t ended_at = 0;      // Unix nanoseconds; 0 while not ended
  int32_t priority = 0;
  double weight = 1.0;
  bool preemptible = false;
  bool preempting = false;  // asked to stop for more urgent work; queued again once it has
  int32_t allocations = 0;  // times placed (more than one after preemptions)
  int32_t restarts = 0;     // times queued again after its agent was lost
  int32_t max_restarts = 0;
  std::string allocation_id;  // the current (or last) allocation
  std::string array_id;       // the job array it belongs to ("": none)
  int64_t array_index = 0;    // its DET_ARRAY_INDEX in that array
  std::string owner;          // who submitted it ("": the master's own work)
  std::string description;
  bool operator==(const TaskSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("type", s.type);
    v("state", s.state);
    v("resource_pool", s.resource_pool);
    v("slots", s.slots);
    v("agents", s.agents);
    v("entrypoint", s.entrypoint);
    v("exit_code", s.exit_code);
    v("failure_type", s.failure_type);
    v("message", s.message);
    v("submitted_at", s.submitted_at);
    v("ended_at", s.ended_at);
    v("priority", s.priority);
    v("weight", s.weight);
    v("preemptible", s.preemptible);
    v("preempting", s.preempting);
    v("allocations", s.allocations);
    v("restarts", s.restarts);
    v("max_restarts", s.max_restarts);
    v("allocation_id", s.allocation_id);
    v("array_id", s.array_id);
    v("array_index", s.array_index);
    v("owner", s.owner);
    v("description", s.description);
  }
};

// Method "task.list": tasks the master knows, oldest first; only those named in `task_ids` when
// it is not empty (names it does not know are left out).
struct TaskListRequest {
  static constexpr std::string_view kType = "task.list";
  std::vector<std::string> task_ids;
  std::string array_id;  // only this job array's tasks
  bool operator==(const TaskListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_ids", s.task_ids);
    v("array_id", s.array_id);
  }
};

struct TaskList {
  static constexpr std::string_view kType = "task.list.reply";
  std::vector<TaskSummary> tasks;
  bool operator==(const TaskList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("tasks", s.tasks);
  }
};

// Method "task.get".
struct TaskGetRequest {
  static constexpr std::string_view kType = "task.get";
  std::string task_id;
  bool operator==(const TaskGetRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
  }
};

struct TaskGetReply {
  static constexpr std::string_view kType = "task.get.reply";
  TaskSummary task;
  bool operator==(const TaskGetReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task", s.task, kRequired);
  }
};

// Method "task.kill": stops the task (queued: dropped; running: SIGTERM, then SIGKILL); a job
// array's id stops every task of it that has not ended.
struct TaskKillRequest {
  static constexpr std::string_view kType = "task.kill";
  std::string task_id;
  bool operator==(const TaskKillRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
  }
};

struct TaskKillReply {
  static constexpr std::string_view kType = "task.kill.reply";
  std::string state;                // the task's state after the request ("" for an array)
  int64_t array_tasks_stopped = 0;  // an array: its tasks asked to stop (those not ended yet)
  bool operator==(const TaskKillReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("state", s.state);
    v("array_tasks_stopped", s.array_tasks_stopped);
  }
};

// Method "task.env.set" (inproc, from the experiment service): variables of the task's
// environment for its next allocations, set together (a trial's DET_LATEST_CHECKPOINT and
// DET_STEPS_COMPLETED, so that a run preempted and placed again resumes from the checkpoint it
// saved before it stopped, counting from its step).
struct TaskEnvSetRequest {
  static constexpr std::string_view kType = "task.env.set";
  std::string task_id;
  std::map<std::string, std::string> env;
  bool operator==(const TaskEnvSetRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
    v("env", s.env, kRequired);
  }
};

struct TaskEnvSetReply {
  static constexpr std::string_view kType = "task.env.set.reply";
  bool operator==(const TaskEnvSetReply&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

// Method "task.logs": stored lines with id > after_id, oldest first.
// Up to `limit` lines with id > after_id, oldest first; only those stamped in [since, until)
// when those are set (Unix ns; 0: open). With `tail` > 0 the page starts instead where the
// task's last `tail` such lines start (after_id is ignored).
struct TaskLogsRequest {
  static constexpr std::string_view kType = "task.logs";
  std::string task_id;
  int64_t after_id = 0;
  int32_t limit = 1000;
  int64_t tail = 0;
  int64_t since = 0;
  int64_t until = 0;
  // Send the stored chunks as they are (TaskLogsReply::chunks) for the caller to decode
  // (storage/log_chunk.h): the master then copies no line, and a full read goes several times
  // faster. `limit` is then the fewest lines the chunks hold, unless the log ends first.
  bool chunks = false;
  bool operator==(const TaskLogsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
    v("after_id", s.after_id);
    v("limit", s.limit);
    v("tail", s.tail);
    v("since", s.since);
    v("until", s.until);
    v("chunks", s.chunks);
  }
};

struct TaskLogLine {
  int64_t id = 0;
  int64_t timestamp = 0;
  std::string agent_id;
  std::string stdtype;
  std::string text;
  bool operator==(const TaskLogLine&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("ts", s.timestamp);
    v("agent", s.agent_id);
    v("std", s.stdtype);
    v("text", s.text);
  }
};

// A stored chunk of log lines: line i's id is id x 65536 + i; codec and data as
// storage/log_chunk.h decodes them. It may hold lines before the request's after_id or outside
// its time range: the reader selects lines as the master would (storage::LogQuery::Selects).
struct TaskLogChunk {
  int64_t id = 0;
  std::string agent_id;
  int32_t codec = 0;
  std::string data;
  int64_t line_count = 0;
  bool operator==(const TaskLogChunk&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("agent", s.agent_id);
    v("codec", s.codec);
    v("data", s.data);
    v("lines", s.line_count);
  }
};

struct TaskLogsReply {
  static constexpr std::string_view kType = "task.logs.reply";
  std::vector<TaskLogLine> lines;
  std::vector<TaskLogChunk> chunks;  // instead of lines, when asked for
  bool task_ended = false;           // and every line it wrote is stored: a follower can stop
  // For a tail: the cursor the page started after, and how many lines the tail holds (fewer
  // than asked when the log is shorter).
  int64_t start_after_id = 0;
  int64_t tail_lines = 0;
  bool operator==(const TaskLogsReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("lines", s.lines);
    v("chunks", s.chunks);
    v("task_ended", s.task_ended);
    v("start_after_id", s.start_after_id);
    v("tail_lines", s.tail_lines);
  }
};

// Method "task.cleanup_logs" (admins): runs log retention now (Determined's det task
// cleanup-logs): the logs of tasks that ended retention_policy.log_retention_days days ago go.
struct TaskCleanupLogsRequest {
  static constexpr std::string_view kType = "task.cleanup_logs";
  bool operator==(const TaskCleanupLogsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

struct TaskCleanupLogsReply {
  static constexpr std::string_view kType = "task.cleanup_logs.reply";
  int64_t lines_removed = 0;
  int32_t log_retention_days = -1;  // the cluster's (experiments may set their own)
  bool operator==(const TaskCleanupLogsReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("lines_removed", s.lines_removed);
    v("log_retention_days", s.log_retention_days);
  }
};

// Event bus (not retained): a task was created or changed state.
struct TaskStateEvent {
  static constexpr std::string_view kType = "task.state";
  TaskSummary task;
  bool operator==(const TaskStateEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task", s.task, kRequired);
  }
};

}  // namespace det::bus
