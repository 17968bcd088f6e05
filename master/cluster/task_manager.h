#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bus/catalog/jobs.h"
#include "bus/catalog/tasks.h"
#include "bus/catalog/workload.h"
#include "common/status.h"
#include "master/cluster/resource_config.h"
#include "master/cluster/task.h"

namespace det::master {

// Tasks, the agents' slots they run on, and the scheduling passes that place them.
//
// Desired state: in every pool, the pool's scheduler (master/cluster/scheduler) is content: every
// placement it would make is made, every preemption it asks for is under way; every task whose
// agent is gone ends with AgentFailed (or, while it has restarts left, `max_restarts`, is queued
// again); every kill reaches each agent the task runs on. Actual
// state: the agents' slots and the states agents report. Changes only mark the manager dirty;
// Schedule() runs the passes (so a burst of submissions costs one pass). Effects go out through
// the Listener (sending to agents, persisting, publishing), called synchronously.
//
// A task runs as one allocation at a time, on one agent or, for a gang fit, on several (one
// Resource each); it ends when all its parts have ended, and a part that fails stops the others.
// A preempted task (preemptible, asked to stop for more urgent work: SIGTERM, then SIGKILL after
// the pool's preemption_timeout) goes back to the queue when its allocation ends, however it
// ended, unless a user killed it; its next allocation is <task id>.<n+1>.
//
// Threading: not thread-safe; owned by one actor.
class TaskManager {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void StartWorkload(const std::string& agent_id, const bus::WorkloadStart& start) = 0;
    virtual void KillWorkload(const std::string& agent_id, const bus::WorkloadKill& kill) = 0;
    // The task was created or changed state (placed, preempted, queued again, ended).
    virtual void TaskChanged(const Task& task) = 0;
    // The task's job settings (priority, weight, pool) changed.
    virtual void TaskSettingsChanged(const Task& task) = 0;
    // A pool's pending demand after a pass differs from the last one reported.
    virtual void PendingChanged(const bus::ClusterPending& pending) = 0;
  };

  TaskManager(Listener& listener, ResourcesConfig resources, std::string master_address = "");

  // An agent joined or re-registered with these slots; `schedulable` false keeps work off it.
  void SetAgent(const std::string& agent_id, const std::string& pool,
                const std::vector<std::string>& slot_ids);
  void SetAgentSchedulable(const std::string& agent_id, bool schedulable);
  // An operator's choice: a disabled agent gets no new work; without `drain` its running tasks
  // are also killed. NotFound for an unknown agent.
  Status SetAgentEnabled(const std::string& agent_id, bool enabled, bool drain);
  // The agent's machine is about to be taken away at `deadline_ns` (a spot interruption notice,
  // a preemption): it gets no new work, and the trials on it are preempted with `reason`: told
  // through the preemption signal at once (they checkpoint, exit and are queued again), SIGTERM
  // only kStopBeforeDeadline before the deadline and SIGKILL kKillBeforeDeadline before it, for a
  // run that has not exited by then. Other tasks run on until the machine goes. How many tasks
  // were preempted; NotFound for an unknown agent.
  static constexpr int64_t kStopBeforeDeadlineNs = 15'000'000'000;
  static constexpr int64_t kKillBeforeDeadlineNs = 5'000'000'000;
  Result<int> AgentInterrupted(const std::string& agent_id, const std::string& reason,
                               int64_t deadline_ns, int64_t now_ns);
  // Sends the deferred stops whose time has come (call from the owner's timer).
  void SendDueStops(int64_t now_ns);
  // A disabled slot gets no new work; what runs on it keeps running.
  Status SetSlotEnabled(const std::string& agent_id, const std::string& slot_id, bool enabled);

  // What the manager knows of an agent's slots, for listings and idleness.
  struct AgentUsage {
    bool enabled = true;
    bool draining = false;  // disabled with drain while tasks still run
    std::vector<std::string> disabled_slots;
    size_t used_slots = 0;
    size_t aux_tasks = 0;
    std::map<std::string, std::string> slot_tasks;  // used slot id -> its task
  };
  AgentUsage Usage(const std::string& agent_id) const;
  // The agent is gone for good: its parts of tasks end with AgentFailed (the tasks' other parts
  // are stopped) and its slots are forgotten.
  void RemoveAgent(const std::string& agent_id, int64_t now_ns);
  // Applies what a registering agent says it runs (and has ended). A workload it runs that no
  // task wants any more is killed, and a requested kill is sent again. With `complete` (the agent
  // process or the master is new, so no start is in flight) a part the agent does not report is
  // started again if it never got past ASSIGNED (or ends Killed if a kill was asked), and
  // otherwise ends with AgentFailed.
  void Reconcile(const std::string& agent_id, const std::vector<bus::WorkloadState>& reported,
                 bool complete, int64_t now_ns);

  // A task loaded from the database after a master restart, queued or placed as it was.
  void Restore(Task task);
  // Agents that restored tasks run on and that have not registered yet.
  std::vector<std::string> AwaitedAgents() const;

  // InvalidArgument for an empty entrypoint, negative slots, a priority outside 1..99, a weight
  // that is not positive, a pool that is not configured, or slots the pool can never provide.
  // `named` gives the task's id, type and job (a trial); an id already known changes nothing and
  // answers that id. Without it the task is a COMMAND with a new id, its own job.
  Result<std::string> Submit(TaskSpec spec, int64_t now_ns, const TaskName& named = {});
  // A job array: one COMMAND per index, "<array id>_<index>" (task.h), each its own job, with
  // DET_ARRAY_ID and DET_ARRAY_INDEX in its environment. Checked as Submit checks one task; all or
  // none are made. The array's id.
  Result<std::string> SubmitArray(TaskSpec spec, const std::vector<int64_t>& indices,
                                  int64_t now_ns);
  // Sets variables of the environment the task's next allocations start with, together (stored
  // with the task). NotFound for an unknown or ended task.
  Status SetEnv(const std::string& task_id, const std::map<std::string, std::string>& env);
  // The task's state after the request; NotFound for an unknown task.
  Result<std::string> Kill(const std::string& task_id, int64_t now_ns);
  // Kills every task of array `array_id` that has not ended; how many. NotFound for an id that
  // names no array.
  Result<int64_t> KillArray(const std::string& array_id, int64_t now_ns);
  // The tasks of array `array_id`, by index.
  std::vector<const Task*> ArrayTasks(const std::string& array_id) const;
  // A state report from `agent_id`; reports for allocations it does not run are ignored.
  void OnWorkloadState(const std::string& agent_id, const bus::WorkloadState& state,
                       int64_t now_ns);

  // Unfinished jobs of `pool` (every pool when empty), each pool in its queue order.
  std::vector<bus::JobSummary> Jobs(const std::string& pool = "") const;
  // Changes a job's priority, weight or pool (the pool only while nothing of it runs). NotFound
  // for a job that is unknown or over; InvalidArgument / FailedPrecondition saying why not.
  Result<bus::JobSummary> UpdateJob(const bus::JobUpdateRequest& update);

  // Runs a scheduling pass over every pool if anything changed since the last: places, asks for
  // preemptions, reports pending demand.
  void Schedule();
  // Whether a change waits for a pass.
  bool schedule_pending() const { return dirty_; }
  // Passes run so far and the time they took (wall time, for /metrics).
  struct SchedulingStats {
    int64_t passes = 0;
    int64_t total_ns = 0;
    int64_t last_ns = 0;
  };
  const SchedulingStats& scheduling() const { return scheduling_; }

  const Task* Find(const std::string& task_id) const;
  std::vector<bus::TaskSummary> List() const;
  size_t queued() const;
  int64_t grace_ms = 10000;  // between SIGTERM and SIGKILL on kill

 private:
  struct AgentSlots {
    std::string pool;
    std::vector<std::string> slot_ids;
    std::map<std::string, std::string> used;  // slot id -> the task that holds it
    int32_t aux = 0;                          // zero-slot tasks it runs
    bool registered = false;                  // restored work may name an agent before it registers
    bool schedulable = true;                  // connected
    bool enabled = true;                      // the operator's choice
    bool drain = false;                       // disabled with drain
    std::set<std::string> disabled_slots;
    bool usable(const std::string& slot) const {
      return !used.count(slot) && !disabled_slots.count(slot);
    }
  };

  // task_scheduling.cc: the passes.
  struct PoolSnapshot;  // the pool as the scheduler sees it
  void SchedulePool(const ResourcePoolConfig& pool);
  PoolSnapshot Snapshot(const ResourcePoolConfig& pool) const;
  // Tells the listener when the pool's demand differs from what it was last told.
  void ReportPending(const bus::ClusterPending& pending);
  void Place(Task& task, const std::vector<std::pair<std::string, int32_t>>& parts,
             bool backfilled);
  void Preempt(Task& task, const ResourcePoolConfig& pool);
  // Asks the task to stop (SIGTERM, SIGKILL after `grace_ms`) and queues it again once it has.
  void PreemptWith(Task& task, std::string reason, int64_t grace_ms);
  Status CheckFits(const TaskSpec& spec, const ResourcePoolConfig& pool) const;
  bus::JobSummary JobOf(const std::vector<const Task*>& tasks, int32_t ahead) const;

  // The end of one part; when every part has ended, of the allocation.
  void EndResource(Task& task, Resource& resource, int32_t exit_code, std::string_view failure,
                   std::string message, int64_t now_ns);
  void EndAllocation(Task& task, int64_t now_ns);
  void Finish(Task& task, int32_t exit_code, std::string_view failure, std::string message,
              int64_t now_ns);
  // Back to the queue after its allocation ended; `why` becomes its message.
  void Requeue(Task& task, AllocationEnd end, std::string why);
  void Release(const Task& task);
  void KillParts(Task& task, int64_t grace);
  // Submit's checks and defaults (the pool, its default priority).
  Result<TaskSpec> Checked(TaskSpec spec) const;
  // Queues `task` (submitted at `now_ns`) and tells the listener.
  void Add(Task task, int64_t now_ns);
  void SendStart(const Task& task, const Resource& resource);
  void AggregateState(Task& task);
  std::vector<Task*> OpenTasksOn(const std::string& agent_id);
  const ResourcePoolConfig* Pool(const std::string& name) const;
  // The pool, or InvalidArgument naming the configured ones.
  Result<const ResourcePoolConfig*> KnownPool(const std::string& name) const;
  // InvalidArgument for a priority outside 1..99 or a weight that is not positive.
  static Status CheckJobSettings(std::optional<int32_t> priority, std::optional<double> weight);

  Listener& listener_;
  ResourcesConfig resources_;
  std::string master_address_;
  std::map<std::string, AgentSlots> agents_;
  std::map<std::string, Task> tasks_;
  std::map<std::string, std::string> task_of_allocation_;
  std::map<std::string, Task*> open_;  // tasks not ended (into tasks_: its nodes never move)
  std::vector<std::string> order_;     // every task id, in submission order
  std::map<std::string, bus::ClusterPending> pending_;  // last reported, per pool
  struct DeferredStop {
    std::string allocation_id;  // the allocation told to stop
    int64_t at_ns = 0;          // SIGTERM then
    int64_t grace_ms = 0;       // SIGKILL after
  };
  std::map<std::string, DeferredStop> deferred_stops_;  // by task id
  bool dirty_ = false;
  SchedulingStats scheduling_;
};

}  // namespace det::master
