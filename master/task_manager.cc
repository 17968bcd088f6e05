#include "master/task_manager.h"

#include <algorithm>

#include "bus/rpc_client.h"

namespace det::master {

bus::TaskSummary Task::Summary() const {
  bus::TaskSummary s;
  s.id = id;
  s.type = type;
  s.state = state;
  s.resource_pool = spec.resource_pool;
  s.slots = spec.slots;
  if (!agent_id.empty()) s.agents = {agent_id};
  s.entrypoint = spec.entrypoint;
  s.exit_code = exit_code;
  s.failure_type = failure_type;
  s.message = message;
  s.submitted_at = submitted_ns;
  s.ended_at = ended_ns;
  return s;
}

TaskManager::TaskManager(Listener& listener, std::string master_address)
    : listener_(listener), master_address_(std::move(master_address)) {}

void TaskManager::SetAgent(const std::string& agent_id, const std::string& pool,
                           const std::vector<std::string>& slot_ids) {
  AgentSlots& agent = agents_[agent_id];
  agent.pool = pool;
  agent.slot_ids = slot_ids;
  agent.registered = true;
  // Slots in use stay in use (the workloads on them keep running) even if no longer reported.
  Place();
}

void TaskManager::SetAgentSchedulable(const std::string& agent_id, bool schedulable) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  it->second.schedulable = schedulable;
  if (schedulable) Place();
}

Status TaskManager::SetAgentEnabled(const std::string& agent_id, bool enabled, bool drain) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return NotFound("agent " + agent_id + " not found");
  it->second.enabled = enabled;
  it->second.drain = !enabled && drain;
  if (enabled) {
    Place();
    return Status::Ok();
  }
  if (drain) return Status::Ok();
  for (const std::string& id : order_) {
    Task& task = tasks_.at(id);
    if (task.agent_id != agent_id || task.ended() || task.kill_requested) continue;
    task.kill_requested = true;
    task.message = "agent " + agent_id + " was disabled";
    listener_.KillWorkload(agent_id, {task.allocation_id, grace_ms});
  }
  return Status::Ok();
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
    Place();
  } else {
    agent.disabled_slots.insert(slot_id);
  }
  return Status::Ok();
}

TaskManager::AgentUsage TaskManager::Usage(const std::string& agent_id) const {
  AgentUsage usage;
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return usage;
  usage.enabled = it->second.enabled;
  usage.used_slots = it->second.used.size();
  usage.draining = it->second.drain && usage.used_slots > 0;
  usage.disabled_slots.assign(it->second.disabled_slots.begin(), it->second.disabled_slots.end());
  return usage;
}

void TaskManager::RemoveAgent(const std::string& agent_id, int64_t now_ns) {
  for (const std::string& id : order_) {
    Task& task = tasks_.at(id);
    if (task.agent_id == agent_id && !task.ended()) {
      Finish(task, -1, bus::kFailureAgentFailed,
             "agent " + agent_id + " was lost and did not come back in time", now_ns);
    }
  }
  agents_.erase(agent_id);
  Place();
}

Result<std::string> TaskManager::Submit(TaskSpec spec, int64_t now_ns) {
  if (spec.entrypoint.empty() || std::all_of(spec.entrypoint.begin(), spec.entrypoint.end(),
                                             [](const std::string& a) { return a.empty(); })) {
    return InvalidArgument("entrypoint is empty: give the command to run");
  }
  if (spec.slots < 0) {
    return InvalidArgument("slots must be 0 or more, not " + std::to_string(spec.slots));
  }
  if (spec.resource_pool.empty()) spec.resource_pool = "default";
  Task task;
  task.id = bus::RandomId();
  task.spec = std::move(spec);
  task.submitted_ns = now_ns;
  const std::string id = task.id;
  tasks_.emplace(id, std::move(task));
  order_.push_back(id);
  queue_.push_back(id);
  listener_.TaskChanged(tasks_.at(id));
  Place();
  return id;
}

Result<std::string> TaskManager::Kill(const std::string& task_id, int64_t now_ns) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + task_id + " not found");
  Task& task = it->second;
  if (task.ended()) return task.state;
  if (task.allocation_id.empty()) {  // still queued
    queue_.erase(std::remove(queue_.begin(), queue_.end(), task_id), queue_.end());
    Finish(task, -1, bus::kFailureKilled, "killed before it was placed", now_ns);
    return task.state;
  }
  task.kill_requested = true;
  listener_.KillWorkload(task.agent_id, {task.allocation_id, grace_ms});
  return task.state;
}

void TaskManager::OnWorkloadState(const std::string& agent_id, const bus::WorkloadState& report,
                                  int64_t now_ns) {
  auto owner = task_of_allocation_.find(report.allocation_id);
  if (owner == task_of_allocation_.end()) return;
  Task& task = tasks_.at(owner->second);
  if (task.agent_id != agent_id || task.ended() || task.state == report.state) return;
  if (report.state == bus::kWorkloadTerminated) {
    std::string failure = report.failure_type;
    if (task.kill_requested && !failure.empty()) failure = bus::kFailureKilled;
    std::string message =
        task.message.empty() ? report.message : task.message + " (" + report.message + ")";
    Finish(task, report.exit_code, failure, std::move(message), now_ns);
    return;
  }
  task.state = report.state;
  listener_.TaskChanged(task);
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

void TaskManager::Place() {
  // Free slots of each agent that takes work, counted once per pass (counting walks every slot);
  // a task that needs more than the most any agent has is passed over at once.
  std::map<std::string, size_t> free;
  size_t most = 0;
  for (const auto& [agent_id, agent] : agents_) {
    if (!agent.registered || !agent.schedulable || !agent.enabled) continue;
    most = std::max(most, free[agent_id] = agent.free());
  }
  for (auto it = queue_.begin(); it != queue_.end();) {
    Task& task = tasks_.at(*it);
    if (static_cast<size_t>(task.spec.slots) > most || !TryPlace(task, free)) {
      ++it;
      continue;
    }
    it = queue_.erase(it);
    most = 0;
    for (const auto& [agent_id, count] : free) most = std::max(most, count);
  }
}

bool TaskManager::TryPlace(Task& task, std::map<std::string, size_t>& free) {
  for (auto& [agent_id, count] : free) {
    AgentSlots& agent = agents_.at(agent_id);
    if (agent.pool != task.spec.resource_pool) continue;
    if (count < static_cast<size_t>(task.spec.slots)) continue;
    count -= static_cast<size_t>(task.spec.slots);
    std::vector<std::string> slots;
    for (const std::string& slot : agent.slot_ids) {
      if (slots.size() == static_cast<size_t>(task.spec.slots)) break;
      if (agent.usable(slot)) slots.push_back(slot);
    }
    for (const std::string& slot : slots) agent.used.insert(slot);
    task.agent_id = agent_id;
    task.slot_ids = slots;
    task.allocation_id = task.id + ".1";
    task.state = bus::kWorkloadAssigned;
    task_of_allocation_[task.allocation_id] = task.id;
    listener_.TaskChanged(task);
    SendStart(task);
    return true;
  }
  return false;
}

void TaskManager::SendStart(const Task& task) {
  listener_.StartWorkload(task.agent_id,
                          {task.allocation_id, task.id, task.spec.entrypoint, task.spec.env,
                           task.slot_ids, master_address_, bus::RandomId()});
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
    if (!task || task->ended() || task->agent_id != agent_id) {
      // Still running but no longer wanted (its task ended while the agent was away): stop it.
      listener_.KillWorkload(agent_id, {state.allocation_id, 0});
    } else if (task->kill_requested) {
      listener_.KillWorkload(agent_id, {state.allocation_id, grace_ms});  // may have been lost
    }
  }
  if (!complete) return;
  std::vector<std::string> unreported;  // decided first: ending one places others on the agent
  for (const std::string& id : order_) {
    const Task& task = tasks_.at(id);
    if (task.agent_id == agent_id && !task.ended() && !known.count(task.allocation_id)) {
      unreported.push_back(id);
    }
  }
  for (const std::string& id : unreported) {
    Task& task = tasks_.at(id);
    if (task.state == bus::kWorkloadAssigned && task.kill_requested) {
      Finish(task, -1, bus::kFailureKilled, "killed before it started", now_ns);
    } else if (task.state == bus::kWorkloadAssigned) {
      SendStart(task);  // the start may have been lost with a restarted master
    } else {
      Finish(task, -1, bus::kFailureAgentFailed,
             "agent " + agent_id + " no longer runs it (the agent restarted without it)", now_ns);
    }
  }
}

void TaskManager::Restore(Task task) {
  const std::string id = task.id;
  if (task.allocation_id.empty()) {
    queue_.push_back(id);
  } else {
    task_of_allocation_[task.allocation_id] = id;
    AgentSlots& agent = agents_[task.agent_id];
    for (const std::string& slot : task.slot_ids) agent.used.insert(slot);
  }
  order_.push_back(id);
  tasks_.emplace(id, std::move(task));
}

std::vector<std::string> TaskManager::AwaitedAgents() const {
  std::vector<std::string> awaited;
  for (const auto& [id, agent] : agents_) {
    if (!agent.registered) awaited.push_back(id);
  }
  return awaited;
}

void TaskManager::Finish(Task& task, int32_t exit_code, std::string_view failure,
                         std::string message, int64_t now_ns) {
  Release(task);
  task.state = bus::kWorkloadTerminated;
  task.exit_code = exit_code;
  task.failure_type = failure;
  task.message = std::move(message);
  task.ended_ns = now_ns;
  listener_.TaskChanged(task);
  Place();
}

void TaskManager::Release(const Task& task) {
  auto agent = agents_.find(task.agent_id);
  if (agent == agents_.end()) return;
  for (const std::string& slot : task.slot_ids) agent->second.used.erase(slot);
}

}  // namespace det::master
