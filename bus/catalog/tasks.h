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
  ContainerSpec container;           // where it runs on an agent whose runtime is docker
  bool operator==(const CommandRunRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("entrypoint", s.entrypoint, kRequired);
    v("slots", s.slots);
    v("resource_pool", s.resource_pool);
    v("env", s.env);
    v("priority", s.priority);
    v("weight", s.weight);
    v("preemptible", s.preemptible);
    v("single_node", s.single_node);
    v("max_slots", s.max_slots);
    v("container", s.container);
  }
};

struct CommandRunReply {
  static constexpr std::string_view kType = "command.run.reply";
  std::string task_id;
  bool operator==(const CommandRunReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
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
  bool preempting = false;    // asked to stop for more urgent work; queued again once it has
  int32_t allocations = 0;    // times placed (more than one after preemptions)
  std::string allocation_id;  // the current (or last) allocation
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
    v("allocation_id", s.allocation_id);
  }
};

// Method "task.list": tasks the master knows, oldest first; only those named in `task_ids` when
// it is not empty (names it does not know are left out).
struct TaskListRequest {
  static constexpr std::string_view kType = "task.list";
  std::vector<std::string> task_ids;
  bool operator==(const TaskListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_ids", s.task_ids);
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

// Method "task.kill": stops the task (queued: dropped; running: SIGTERM, then SIGKILL).
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
  std::string state;  // the task's state after the request
  bool operator==(const TaskKillReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("state", s.state);
  }
};

// Method "task.logs": stored lines with id > after_id, oldest first.
struct TaskLogsRequest {
  static constexpr std::string_view kType = "task.logs";
  std::string task_id;
  int64_t after_id = 0;
  int32_t limit = 1000;
  bool operator==(const TaskLogsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("task_id", s.task_id, kRequired);
    v("after_id", s.after_id);
    v("limit", s.limit);
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

struct TaskLogsReply {
  static constexpr std::string_view kType = "task.logs.reply";
  std::vector<TaskLogLine> lines;
  bool task_ended = false;  // and every line it wrote is stored: a follower can stop
  bool operator==(const TaskLogsReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("lines", s.lines);
    v("task_ended", s.task_ended);
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
