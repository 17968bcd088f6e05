#include "master/cluster/task_manager.h"

#include <algorithm>

#include "bus/rpc_client.h"
#include "common/strings.h"

namespace det::master {
namespace {

// How far a workload has come; a task is as far as its least advanced part.
int Progress(std::string_view state) {
  if (state == bus::kWorkloadPulling) return 1;
  if (state == bus::kWorkloadStarting) return 2;
  if (state == bus::kWorkloadRunning) return 3;
  if (state == bus::kWorkloadTerminated) return 4;
  return 0;  // ASSIGNED
}

}  // namespace

TaskManager::TaskManager(Listener& listener, ResourcesConfig resources, std::string master_address)
    : listener_(listener),
      resources_(std::move(resources)),
      master_address_(std::move(master_address)) {}

const ResourcePoolConfig* TaskManager::Pool(const std::string& name) const {
  return FindPool(resources_, name);
}

Result<const ResourcePoolConfig*> TaskManager::KnownPool(const std::string& name) const {
  if (const ResourcePoolConfig* pool = Pool(name)) return pool;
  return InvalidArgument("resource pool \"" + name +
                         "\" is not configured; pools: " + Join(PoolNames(resources_), ", "));
}

Status TaskManager::CheckJobSettings(std::optional<int32_t> priority,
                                     std::optional<double> weight) {
  if (priority && (*priority < scheduler::kMinPriority || *priority > scheduler::kMaxPriority)) {
    return InvalidArgument("priority must be 1 (most urgent) to 99, not " +
                           std::to_string(*priority));
  }
  if (weight && !(*weight > 0)) return InvalidArgument("weight must be more than 0");
  return Status::Ok();
}

void TaskManager::SetAgent(const std::string& agent_id, const std::string& pool,
                           const std::vector<std::string>& slot_ids) {
  AgentSlots& agent = agents_[agent_id];
  agent.pool = pool;
  agent.slot_ids = slot_ids;
  agent.registered = true;
  // Slots in use stay in use (the workloads on them keep running) even if no longer reported.
  dirty_ = true;
}

void TaskManager::SetAgentSchedulable(const std::string& agent_id, bool schedulable) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  it->second.schedulable = schedulable;
  dirty_ = true;
}

Status TaskManager::SetAgentEnabled(const std::string& agent_id, bool enabled, bool drain) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return NotFound("agent " + agent_id + " not found");
  it->second.enabled = enabled;
  it->second.drain = !enabled && drain;
  dirty_ = true;
  if (enabled || drain) return Status::Ok();
  for (Task* task : OpenTasksOn(agent_id)) {
    if (task->kill_requested) continue;
    task->kill_requested = true;
    task->message = "agent " + agent_id + " was disabled";
    KillParts(*task, grace_ms);
  }
  return Status::Ok();
}

Status TaskManager::SetEnv(const std::string& task_id,
                           const std::map<std::string, std::string>& env) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.ended()) return NotFound("task " + task_id + " not found");
  bool changed = false;
  for (const auto& [name, value] : env) {
    std::string& current = it->second.spec.env[name];
    changed = changed || current != value;
    current = value;
  }
  if (!changed) return Status::Ok();
  listener_.TaskSettingsChanged(it->second);
  return Status::Ok();
}

Result<int> TaskManager::AgentInterrupted(const std::string& agent_id, const std::string& reason,
                                          int64_t deadline_ns, int64_t now_ns) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return NotFound("agent " + agent_id + " not found");
  it->second.enabled = false;
  it->second.drain = true;
  dirty_ = true;
  const int64_t stop_at = std::max(now_ns, deadline_ns - kStopBeforeDeadlineNs);
  const int64_t grace_ms =
      std::max<int64_t>(deadline_ns - kKillBeforeDeadlineNs - stop_at, 1'000'000'000) / 1'000'000;
  int preempted = 0;
  for (Task* task : OpenTasksOn(agent_id)) {
    // Trials listen for the preemption signal and resume from their checkpoint; a command
    // cannot, and may still finish before the machine goes.
    if (task->type != "TRIAL" || task->preempting || task->kill_requested) continue;
    task->preempting = true;
    task->message = reason;
    listener_.TaskChanged(*task);  // the run's signal says stop, with the reason
    deferred_stops_[task->id] = {task->allocation_id, stop_at, grace_ms};
    ++preempted;
  }
  SendDueStops(now_ns);
  return preempted;
}

void TaskManager::SendDueStops(int64_t now_ns) {
  for (auto it = deferred_stops_.begin(); it != deferred_stops_.end();) {
    auto task = tasks_.find(it->first);
    const bool current = task != tasks_.end() && !task->second.ended() &&
                         task->second.allocation_id == it->second.allocation_id;
    if (current && now_ns < it->second.at_ns) {
      ++it;
      continue;
    }
    if (current) KillParts(task->second, it->second.grace_ms);
    it = deferred_stops_.erase(it);
  }
}

Status TaskManager::SetSlotEnabled(const std::string& agent_id, const std::string& slot_id,
                                   bool enabled) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return NotFound("agent " + agent_id + " not found");
  AgentSlots& agent = it->second;
  if (std::find(agent.slot_ids.begin(), agent.slot_ids.end(), slot_id) == agent.slot_ids.end()) {
    return NotFound("agent " + agent_id + " has no slot " + slot_id);
  }
  if (enabled) {
    agent.disabled_slots.erase(slot_id);
  } else {
    agent.disabled_slots.insert(slot_id);
  }
  dirty_ = true;
  return Status::Ok();
}

TaskManager::AgentUsage TaskManager::Usage(const std::string& agent_id) const {
  AgentUsage usage;
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return usage;
  usage.enabled = it->second.enabled;
  usage.used_slots = it->second.used.size();
  usage.slot_tasks = it->second.used;
  usage.aux_tasks = static_cast<size_t>(it->second.aux);
  usage.draining = it->second.drain && (usage.used_slots > 0 || usage.aux_tasks > 0);
  usage.disabled_slots.assign(it->second.disabled_slots.begin(), it->second.disabled_slots.end());
  return usage;
}

std::vector<Task*> TaskManager::OpenTasksOn(const std::string& agent_id) {
  std::vector<Task*> on;
  for (const auto& [id, task] : open_) {
    if (task->RunsOn(agent_id)) on.push_back(task);
  }
  return on;
}

void TaskManager::RemoveAgent(const std::string& agent_id, int64_t now_ns) {
  for (Task* task : OpenTasksOn(agent_id)) {
    for (Resource& resource : task->resources) {
      if (resource.agent_id != agent_id || resource.ended()) continue;
      EndResource(*task, resource, -1, bus::kFailureAgentFailed,
                  "agent " + agent_id + " was lost and did not come back in time", now_ns);
      break;
    }
  }
  agents_.erase(agent_id);
  dirty_ = true;
}

Result<TaskSpec> TaskManager::Checked(TaskSpec spec) const {
  if (spec.entrypoint.empty() || std::all_of(spec.entrypoint.begin(), spec.entrypoint.end(),
                                             [](const std::string& a) { return a.empty(); })) {
    return InvalidArgument("entrypoint is empty: give the command to run");
  }
  if (spec.slots < 0) {
    return InvalidArgument("slots must be 0 or more, not " + std::to_string(spec.slots));
  }
  DET_RETURN_IF_ERROR(CheckJobSettings(spec.priority, spec.weight));
  if (spec.max_restarts < 0 || spec.max_restarts > bus::CommandRunRequest::kMaxRestartsLimit) {
    return InvalidArgument("max_restarts must be 0 to " +
                           std::to_string(bus::CommandRunRequest::kMaxRestartsLimit) + ", not " +
                           std::to_string(spec.max_restarts));
  }
  if (spec.resource_pool.empty()) {
    spec.resource_pool = spec.slots == 0
                             ? resources_.resource_manager.default_aux_resource_pool
                             : resources_.resource_manager.default_compute_resource_pool;
  }
  DET_ASSIGN_OR_RETURN(const ResourcePoolConfig* pool, KnownPool(spec.resource_pool));
  DET_RETURN_IF_ERROR(CheckFits(spec, *pool));
  if (!spec.priority) spec.priority = pool->scheduler.default_priority;
  return spec;
}

void TaskManager::Add(Task task, int64_t now_ns) {
  task.submitted_ns = now_ns;
  const std::string id = task.id;
  Task& added = tasks_.emplace(id, std::move(task)).first->second;
  order_.push_back(id);
  open_.emplace(id, &added);
  listener_.TaskChanged(added);
  dirty_ = true;
}

Result<std::string> TaskManager::Submit(TaskSpec spec, int64_t now_ns, const TaskName& named) {
  if (!named.id.empty() && tasks_.count(named.id)) return named.id;
  Task task;
  DET_ASSIGN_OR_RETURN(task.spec, Checked(std::move(spec)));
  task.id = named.id.empty() ? bus::RandomUuid() : named.id;
  if (!named.type.empty()) task.type = named.type;
  task.job_id = named.job_id.empty() ? task.id : named.job_id;
  const std::string id = task.id;
  Add(std::move(task), now_ns);
  return id;
}

Result<std::string> TaskManager::SubmitArray(TaskSpec spec, const std::vector<int64_t>& indices,
                                             int64_t now_ns) {
  if (indices.empty()) return InvalidArgument("array: no index");
  DET_ASSIGN_OR_RETURN(const TaskSpec checked, Checked(std::move(spec)));
  const std::string array_id = bus::RandomId();
  for (int64_t index : indices) {
    Task task;
    task.id = ArrayTaskId(array_id, index);
    task.job_id = task.id;
    task.spec = checked;
    task.spec.env["DET_ARRAY_ID"] = array_id;
    task.spec.env["DET_ARRAY_INDEX"] = std::to_string(index);
    Add(std::move(task), now_ns);
  }
  return array_id;
}

std::vector<const Task*> TaskManager::ArrayTasks(const std::string& array_id) const {
  std::vector<std::pair<int64_t, const Task*>> found;
  const std::string prefix = array_id + "_";
  for (auto it = tasks_.lower_bound(prefix); it != tasks_.end() && it->first.starts_with(prefix);
       ++it) {
    if (std::optional<ArrayPlace> place = ArrayPlaceOf(it->first)) {
      found.emplace_back(place->index, &it->second);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<const Task*> tasks;
  for (const auto& [index, task] : found) tasks.push_back(task);
  return tasks;
}

Result<int64_t> TaskManager::KillArray(const std::string& array_id, int64_t now_ns) {
  const std::vector<const Task*> tasks = ArrayTasks(array_id);
  if (tasks.empty()) return NotFound("task " + array_id + " not found");
  int64_t stopped = 0;
  for (const Task* task : tasks) {
    if (task->ended()) continue;
    DET_RETURN_IF_ERROR(Kill(task->id, now_ns).status());
    ++stopped;
  }
  return stopped;
}

Result<std::string> TaskManager::Kill(const std::string& task_id, int64_t now_ns) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + task_id + " not found");
  Task& task = it->second;
  if (task.ended()) return task.state;
  if (!task.placed()) {
    Finish(task, -1, bus::kFailureKilled, "killed before it was placed", now_ns);
    return task.state;
  }
  task.kill_requested = true;
  KillParts(task, grace_ms);
  return task.state;
}

void TaskManager::KillParts(Task& task, int64_t grace) {
  for (const Resource& resource : task.resources) {
    if (!resource.ended()) listener_.KillWorkload(resource.agent_id, {task.allocation_id, grace});
  }
}

void TaskManager::OnWorkloadState(const std::string& agent_id, const bus::WorkloadState& report,
                                  int64_t now_ns) {
  auto owner = task_of_allocation_.find(report.allocation_id);
  if (owner == task_of_allocation_.end()) return;
  Task& task = tasks_.at(owner->second);
  if (task.ended() || task.allocation_id != report.allocation_id) return;
  auto resource = std::find_if(task.resources.begin(), task.resources.end(),
                               [&](const Resource& r) { return r.agent_id == agent_id; });
  if (resource == task.resources.end() || resource->ended()) return;
  if (report.state == bus::kWorkloadTerminated) {
    EndResource(task, *resource, report.exit_code, report.failure_type, report.message, now_ns);
    return;
  }
  if (resource->state == report.state) return;
  resource->state = report.state;
  AggregateState(task);
}

void TaskManager::AggregateState(Task& task) {
  std::string least;
  for (const Resource& resource : task.resources) {
    if (resource.ended()) continue;
    if (least.empty() || Progress(resource.state) < Progress(least)) least = resource.state;
  }
  if (least.empty() || least == task.state) return;
  task.state = least;
  listener_.TaskChanged(task);
}

void TaskManager::EndResource(Task& task, Resource& resource, int32_t exit_code,
                              std::string_view failure, std::string message, int64_t now_ns) {
  resource.state = bus::kWorkloadTerminated;
  resource.exit_code = exit_code;
  resource.failure_type = failure;
  resource.message = std::move(message);
  const bool all_ended = std::all_of(task.resources.begin(), task.resources.end(),
                                     [](const Resource& r) { return r.ended(); });
  if (all_ended) return EndAllocation(task, now_ns);
  if (!failure.empty() || exit_code != 0) KillParts(task, grace_ms);  // a gang stops together
  AggregateState(task);
}

void TaskManager::EndAllocation(Task& task, int64_t now_ns) {
  // The first part that failed tells how the allocation ended.
  const Resource* how = &task.resources.front();
  for (const Resource& resource : task.resources) {
    if (!resource.failure_type.empty() || resource.exit_code != 0) {
      how = &resource;
      break;
    }
  }
  std::string failure = how->failure_type;
  if (task.kill_requested && !failure.empty()) failure = bus::kFailureKilled;
  std::string message = task.message.empty() || how->message.empty()
                            ? task.message + how->message
                            : task.message + " (" + how->message + ")";
  if (task.preempting && !task.kill_requested) {
    Requeue(task, {task.allocation_id, how->exit_code, failure, std::move(message), now_ns},
            "preempted; queued again");
    return;
  }
  if (failure == bus::kFailureAgentFailed && !task.kill_requested &&
      task.restarts < task.spec.max_restarts) {
    ++task.restarts;
    listener_.TaskSettingsChanged(task);  // the count survives a master restart
    Requeue(task, {task.allocation_id, how->exit_code, failure, message, now_ns},
            message + "; queued again (restart " + std::to_string(task.restarts) + " of " +
                std::to_string(task.spec.max_restarts) + ")");
    return;
  }
  Finish(task, how->exit_code, failure, std::move(message), now_ns);
}

void TaskManager::Requeue(Task& task, AllocationEnd end, std::string why) {
  Release(task);
  deferred_stops_.erase(task.id);
  task.last_end = std::move(end);
  task.resources.clear();
  task.preempting = false;
  task.backfilled = false;
  task.message = std::move(why);
  task.state = "QUEUED";
  listener_.TaskChanged(task);
  dirty_ = true;
}

void TaskManager::Finish(Task& task, int32_t exit_code, std::string_view failure,
                         std::string message, int64_t now_ns) {
  Release(task);
  deferred_stops_.erase(task.id);
  task.state = bus::kWorkloadTerminated;
  task.exit_code = exit_code;
  task.failure_type = failure;
  task.message = std::move(message);
  task.ended_ns = now_ns;
  open_.erase(task.id);
  listener_.TaskChanged(task);
  dirty_ = true;
}

void TaskManager::Release(const Task& task) {
  for (const Resource& resource : task.resources) {
    auto agent = agents_.find(resource.agent_id);
    if (agent == agents_.end()) continue;
    if (resource.slot_ids.empty()) agent->second.aux = std::max(0, agent->second.aux - 1);
    for (const std::string& slot : resource.slot_ids) agent->second.used.erase(slot);
  }
}

void TaskManager::SendStart(const Task& task, const Resource& resource) {
  // A task spread over several agents runs one container on each: which one it is and how many
  // there are lets them meet at the master's rendezvous (the Core API).
  std::map<std::string, std::string> env = task.spec.env;
  const auto rank = &resource - task.resources.data();  // `resource` is one of task.resources
  env["DET_CONTAINER_RANK"] = std::to_string(rank);
  env["DET_NUM_CONTAINERS"] = std::to_string(task.resources.size());
  listener_.StartWorkload(
      resource.agent_id,
      {task.allocation_id, task.id, task.spec.entrypoint, std::move(env), resource.slot_ids,
       master_address_, bus::RandomId(), task.spec.container, task.spec.run_as});
}

void TaskManager::Reconcile(const std::string& agent_id,
                            const std::vector<bus::WorkloadState>& reported, bool complete,
                            int64_t now_ns) {
  std::set<std::string> known;
  for (const bus::WorkloadState& state : reported) {
    known.insert(state.allocation_id);
    OnWorkloadState(agent_id, state, now_ns);
    if (state.state == bus::kWorkloadTerminated) continue;
    auto owner = task_of_allocation_.find(state.allocation_id);
    const Task* task = owner == task_of_allocation_.end() ? nullptr : &tasks_.at(owner->second);
    if (!task || task->ended() || task->allocation_id != state.allocation_id ||
        !task->RunsOn(agent_id)) {
      // Still running but no longer wanted (its task ended while the agent was away): stop it.
      listener_.KillWorkload(agent_id, {state.allocation_id, 0});
    } else if (task->kill_requested || task->preempting) {
      listener_.KillWorkload(agent_id, {state.allocation_id, grace_ms});  // may have been lost
    }
  }
  if (!complete) return;
  for (Task* task : OpenTasksOn(agent_id)) {  // decided first: ending one frees slots
    for (Resource& resource : task->resources) {
      if (resource.agent_id != agent_id || resource.ended() || known.count(task->allocation_id)) {
        continue;
      }
      if (resource.state == bus::kWorkloadAssigned && task->kill_requested) {
        EndResource(*task, resource, -1, bus::kFailureKilled, "killed before it started", now_ns);
      } else if (resource.state == bus::kWorkloadAssigned) {
        SendStart(*task, resource);  // the start may have been lost with a restarted master
      } else {
        EndResource(*task, resource, -1, bus::kFailureAgentFailed,
                    "agent " + agent_id + " no longer runs it (the agent restarted without it)",
                    now_ns);
      }
      break;
    }
  }
}

void TaskManager::Restore(Task task) {
  const std::string id = task.id;
  if (task.job_id.empty()) task.job_id = id;
  if (!task.spec.priority) {
    const ResourcePoolConfig* pool = Pool(task.spec.resource_pool);
    task.spec.priority = pool ? pool->scheduler.default_priority : 42;
  }
  if (task.placed()) {
    task_of_allocation_[task.allocation_id] = id;
    for (const Resource& resource : task.resources) {
      AgentSlots& agent = agents_[resource.agent_id];
      if (resource.slot_ids.empty()) ++agent.aux;
      for (const std::string& slot : resource.slot_ids) agent.used[slot] = id;
    }
  }
  order_.push_back(id);
  open_.emplace(id, &tasks_.emplace(id, std::move(task)).first->second);
  dirty_ = true;
}

std::vector<std::string> TaskManager::AwaitedAgents() const {
  std::vector<std::string> awaited;
  for (const auto& [id, agent] : agents_) {
    if (!agent.registered) awaited.push_back(id);
  }
  return awaited;
}

const Task* TaskManager::Find(const std::string& task_id) const {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::vector<bus::TaskSummary> TaskManager::List() const {
  std::vector<bus::TaskSummary> list;
  list.reserve(order_.size());
  for (const std::string& id : order_) list.push_back(tasks_.at(id).Summary());
  return list;
}

size_t TaskManager::queued() const {
  return static_cast<size_t>(std::count_if(
      open_.begin(), open_.end(), [](const auto& open) { return !open.second->placed(); }));
}

}  // namespace det::master
