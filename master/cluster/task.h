#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bus/catalog/tasks.h"
#include "bus/catalog/workload.h"

namespace det::master {

// Job arrays (`det cmd run --array`): the tasks of array A are "A_<index>", A a random id of 32 hex
// digits, so a task's place in its array is read off its id (also after a restart).
struct ArrayPlace {
  std::string array_id;
  int64_t index = 0;
};
std::string ArrayTaskId(const std::string& array_id, int64_t index);
// The array and index of `task_id`, if it is an array's task.
std::optional<ArrayPlace> ArrayPlaceOf(std::string_view task_id);

// What a user asked to run.
struct TaskSpec {
  std::vector<std::string> entrypoint;
  int32_t slots = 1;
  std::string resource_pool;  // empty: the default compute pool (aux pool for zero slots)
  std::map<std::string, std::string> env;
  std::optional<int32_t> priority;  // unset: the pool's default_priority
  double weight = 1.0;
  bool preemptible = false;
  bool single_node = true;
  std::optional<int32_t> max_slots;  // its job's cap on slots held at once (resources.max_slots)
  bus::ContainerSpec container;      // the container it runs in on a docker agent
  int32_t max_restarts = 0;          // queued again this often when its agent is lost
  std::optional<bus::AgentUserGroup> run_as;  // the account it runs as on agents (none: theirs)
  std::string owner;                          // who submitted it ("": the master's own work)
  std::string description;
};

// Who a task is when its submitter names it (empty id: a new COMMAND, its own job).
struct TaskName {
  std::string id;
  std::string type;
  std::string job_id;
};

// One agent's part of an allocation: the slots there and the workload's state on it.
struct Resource {
  std::string agent_id;
  std::vector<std::string> slot_ids;  // empty for a zero-slot task
  std::string state = std::string(bus::kWorkloadAssigned);
  int32_t exit_code = 0;
  std::string failure_type;
  std::string message;
  bool ended() const { return state == bus::kWorkloadTerminated; }
};

// How an allocation that is over ended (kept for the record when the task is queued again).
struct AllocationEnd {
  std::string allocation_id;
  int32_t exit_code = 0;
  std::string failure_type;
  std::string message;
  int64_t ended_ns = 0;
};

struct Task {
  std::string id;
  std::string type = "COMMAND";
  std::string job_id;  // the job it belongs to (a command is its own job)
  TaskSpec spec;       // spec.resource_pool and spec.priority are always set once submitted
  std::string state = "QUEUED";           // then bus::kWorkload* states
  std::string allocation_id;              // the current (or last) allocation
  int32_t allocations = 0;                // times placed; allocation ids are <task id>.<n>
  int32_t restarts = 0;                   // times queued again after its agent was lost
  std::vector<Resource> resources;        // where the current allocation runs (several: a gang)
  bool preempting = false;                // asked to stop for more urgent work
  bool backfilled = false;                // placed past a request ahead of it
  std::optional<AllocationEnd> last_end;  // the allocation before this one, if any
  int32_t exit_code = 0;
  std::string failure_type;
  std::string message;
  int64_t submitted_ns = 0;
  int64_t ended_ns = 0;
  bool kill_requested = false;

  bool ended() const { return state == bus::kWorkloadTerminated; }
  bool placed() const { return !resources.empty(); }
  int32_t priority() const { return spec.priority.value_or(0); }
  bool RunsOn(const std::string& agent_id) const;
  std::vector<std::string> Agents() const;
  bus::TaskSummary Summary() const;
};

}  // namespace det::master
