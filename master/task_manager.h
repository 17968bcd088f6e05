#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bus/catalog/tasks.h"
#include "bus/catalog/workload.h"
#include "common/status.h"

namespace det::master {

// What a user asked to run.
struct TaskSpec {
  std::vector<std::string> entrypoint;
  int32_t slots = 1;
  std::string resource_pool = "default";
  std::map<std::string, std::string> env;
};

struct Task {
  std::string id;
  std::string type = "COMMAND";
  TaskSpec spec;
  std::string state = "QUEUED";  // then bus::kWorkload* states
  std::string allocation_id;     // set when placed
  std::string agent_id;          // where it runs (first fit: one agent)
  std::vector<std::string> slot_ids;
  int32_t exit_code = 0;
  std::string failure_type;
  std::string message;
  int64_t submitted_ns = 0;
  int64_t ended_ns = 0;
  bool kill_requested = false;

  bool ended() const { return state == bus::kWorkloadTerminated; }
  bus::TaskSummary Summary() const;
};

// Tasks and where they run: a FIFO queue per cluster placed first-fit onto agents' free slots,
// and the state each task is in.
//
// Desired state: every queued task that fits somewhere is placed, every task whose agent is gone
// is terminated with AgentFailed, every kill reaches the workload. Actual state: the agents' slots
// and the states agents report. Effects go out through the Listener (sending to agents,
// persisting, publishing), called synchronously from these methods.
//
// Threading: not thread-safe; owned by one actor.
class TaskManager {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void StartWorkload(const std::string& agent_id, const bus::WorkloadStart& start) = 0;
    virtual void KillWorkload(const std::string& agent_id, const bus::WorkloadKill& kill) = 0;
    // The task was created or changed state.
    virtual void TaskChanged(const Task& task) = 0;
  };

  explicit TaskManager(Listener& listener, std::string master_address = "");

  // An agent joined or re-registered with these slots; `schedulable` false keeps work off it.
  void SetAgent(const std::string& agent_id, const std::string& pool,
                const std::vector<std::string>& slot_ids);
  void SetAgentSchedulable(const std::string& agent_id, bool schedulable);
  // An operator's choice: a disabled agent gets no new work; without `drain` its running tasks
  // are also killed. NotFound for an unknown agent.
  Status SetAgentEnabled(const std::string& agent_id, bool enabled, bool drain);
  // A disabled slot gets no new work; what runs on it keeps running.
  Status SetSlotEnabled(const std::string& agent_id, const std::string& slot_id, bool enabled);

  // What the manager knows of an agent's slots, for listings and idleness.
  struct AgentUsage {
    bool enabled = true;
    bool draining = false;  // disabled with drain while tasks still run
    std::vector<std::string> disabled_slots;
    size_t used_slots = 0;
  };
  AgentUsage Usage(const std::string& agent_id) const;
  // The agent is gone for good: its tasks end with AgentFailed and its slots are forgotten.
  void RemoveAgent(const std::string& agent_id, int64_t now_ns);
  // Applies what a registering agent says it runs (and has ended). A workload it runs that no
  // task wants any more is killed, and a requested kill is sent again. With `complete` (the agent
  // process or the master is new, so no start is in flight) a task the agent does not report is
  // started again if it never got past ASSIGNED (or ends Killed if a kill was asked), and
  // otherwise ends with AgentFailed.
  void Reconcile(const std::string& agent_id, const std::vector<bus::WorkloadState>& reported,
                 bool complete, int64_t now_ns);

  // A task loaded from the database after a master restart, queued or placed as it was.
  void Restore(Task task);
  // Agents that restored tasks run on and that have not registered yet.
  std::vector<std::string> AwaitedAgents() const;

  // InvalidArgument for an empty entrypoint or a non-positive slot count.
  Result<std::string> Submit(TaskSpec spec, int64_t now_ns);
  // The task's state after the request; NotFound for an unknown task.
  Result<std::string> Kill(const std::string& task_id, int64_t now_ns);
  // A state report from `agent_id`; reports for allocations it does not run are ignored.
  void OnWorkloadState(const std::string& agent_id, const bus::WorkloadState& state,
                       int64_t now_ns);

  const Task* Find(const std::string& task_id) const;
  std::vector<bus::TaskSummary> List() const;
  size_t queued() const { return queue_.size(); }
  int64_t grace_ms = 10000;  // between SIGTERM and SIGKILL on kill

 private:
  struct AgentSlots {
    std::string pool;
    std::vector<std::string> slot_ids;
    std::set<std::string> used;
    bool registered = false;  // restored work may name an agent before it registers
    bool schedulable = true;  // connected
    bool enabled = true;      // the operator's choice
    bool drain = false;       // disabled with drain
    std::set<std::string> disabled_slots;
    bool usable(const std::string& slot) const {
      return !used.count(slot) && !disabled_slots.count(slot);
    }
    size_t free() const {
      size_t n = 0;
      for (const auto& slot : slot_ids) n += usable(slot) ? 1 : 0;
      return n;
    }
  };

  void Place();
  // First fit over `free` (free slots per agent that takes work), which it keeps up to date.
  bool TryPlace(Task& task, std::map<std::string, size_t>& free);
  void Finish(Task& task, int32_t exit_code, std::string_view failure, std::string message,
              int64_t now_ns);
  void Release(const Task& task);
  void SendStart(const Task& task);

  Listener& listener_;
  std::string master_address_;
  std::map<std::string, AgentSlots> agents_;
  std::map<std::string, Task> tasks_;
  std::map<std::string, std::string> task_of_allocation_;
  std::deque<std::string> queue_;   // task ids, in submission order
  std::vector<std::string> order_;  // every task id, in submission order
};

}  // namespace det::master
