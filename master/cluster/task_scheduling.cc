// TaskManager's scheduling passes and job queue: the bridge between its state and the pure
// scheduler (master/cluster/scheduler).
#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

#include "common/clock.h"
#include "common/strings.h"
#include "master/cluster/scheduler/fair_share_scheduler.h"
#include "master/cluster/scheduler/fit_check.h"
#include "master/cluster/scheduler/pending_demand.h"
#include "master/cluster/scheduler/priority_scheduler.h"
#include "master/cluster/task_manager.h"

namespace det::master {
namespace {

// Tasks of a pool in queue order: priority, then position (submission), then id.
bool QueueOrder(const Task* a, const Task* b) {
  return std::tuple(a->priority(), a->submitted_ns, a->id) <
         std::tuple(b->priority(), b->submitted_ns, b->id);
}

}  // namespace

void TaskManager::Schedule() {
  if (!dirty_) return;
  dirty_ = false;
  const Clock& real = RealClock::Instance();  // the pass's cost: work done, not simulated time
  const MonoTime start = real.Now();
  for (const ResourcePoolConfig& pool : resources_.resource_pools) SchedulePool(pool);
  const int64_t took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(real.Now() - start).count();
  ++scheduling_.passes;
  scheduling_.total_ns += took;
  scheduling_.last_ns = took;
}

// One pool as the scheduler sees it, and what its indices stand for.
struct TaskManager::PoolSnapshot {
  scheduler::PoolView view;
  std::vector<std::string> agent_ids;
  std::vector<Task*> tasks;  // of view.requests
  std::map<std::string, size_t> agent_index;
};

void TaskManager::SchedulePool(const ResourcePoolConfig& pool) {
  // Nothing waits: nothing to place or to preempt for, and no demand (the common case while
  // agents come and go), without walking the agents.
  const bool waiting = std::any_of(open_.begin(), open_.end(), [&](const auto& open) {
    const Task& task = *open.second;
    return !task.placed() && task.spec.resource_pool == pool.pool_name;
  });
  if (!waiting) {
    ReportPending({pool.pool_name, 0, 0, 0, 0});
    return;
  }
  PoolSnapshot snap = Snapshot(pool);
  const scheduler::Decisions decisions =
      pool.scheduler.type == scheduler::SchedulerConfig::Type::kFairShare
          ? scheduler::ScheduleFairShare(snap.view, pool.scheduler)
          : scheduler::SchedulePriority(snap.view, pool.scheduler);
  for (const scheduler::Placement& placement : decisions.placements) {
    std::vector<std::pair<std::string, int32_t>> parts;
    for (const auto& [agent, slots] : placement.agents) {
      parts.emplace_back(snap.agent_ids[agent], slots);
    }
    Place(*snap.tasks[placement.request], parts, placement.backfilled);
    snap.view.requests[placement.request].placed = placement.agents;
  }
  for (size_t preempted : decisions.preemptions) Preempt(*snap.tasks[preempted], pool);

  const int32_t per_instance = pool.provider ? pool.provider->slots_per_instance : 0;
  const scheduler::PendingDemand demand = scheduler::CountPending(snap.view, per_instance);
  ReportPending({pool.pool_name, demand.slots, demand.aux_tasks, demand.tasks, demand.largest});
}

TaskManager::PoolSnapshot TaskManager::Snapshot(const ResourcePoolConfig& pool) const {
  PoolSnapshot snap;
  snap.view.max_aux_per_agent = pool.max_aux_containers_per_agent;
  for (const auto& [id, agent] : agents_) {
    if (agent.pool != pool.pool_name || !agent.registered) continue;
    scheduler::AgentView view{id, 0, 0, agent.aux, agent.schedulable && agent.enabled};
    for (const std::string& slot : agent.slot_ids) {
      if (agent.disabled_slots.count(slot)) continue;
      ++view.slots;
      if (agent.used.count(slot)) ++view.used;
    }
    snap.agent_index[id] = snap.view.agents.size();
    snap.agent_ids.push_back(id);
    snap.view.agents.push_back(std::move(view));
  }
  std::map<std::string, size_t> job_index;
  for (const auto& [id, open] : open_) {
    const Task& task = *open;
    if (task.spec.resource_pool != pool.pool_name) continue;
    scheduler::RequestView request{id,
                                   0,
                                   task.spec.slots,
                                   task.spec.preemptible,
                                   task.spec.single_node,
                                   task.submitted_ns,
                                   {},
                                   task.preempting};
    for (const Resource& resource : task.resources) {
      auto agent = snap.agent_index.find(resource.agent_id);
      if (agent != snap.agent_index.end()) {
        request.placed.emplace_back(agent->second, static_cast<int32_t>(resource.slot_ids.size()));
      }
    }
    if (task.placed() && request.placed.empty()) continue;  // on agents not back yet
    auto [job, added] = job_index.try_emplace(task.job_id, snap.view.jobs.size());
    if (added) {
      snap.view.jobs.push_back(
          {task.job_id, task.priority(), task.spec.weight, task.spec.max_slots, task.submitted_ns});
    }
    request.job = job->second;
    snap.tasks.push_back(open);
    snap.view.requests.push_back(std::move(request));
  }
  return snap;
}

void TaskManager::ReportPending(const bus::ClusterPending& pending) {
  auto [last, first] = pending_.try_emplace(pending.resource_pool, pending);
  if (first || last->second != pending) {
    last->second = pending;
    listener_.PendingChanged(pending);
  }
}

void TaskManager::Place(Task& task, const std::vector<std::pair<std::string, int32_t>>& parts,
                        bool backfilled) {
  task.resources.clear();
  for (const auto& [agent_id, slots] : parts) {
    AgentSlots& agent = agents_.at(agent_id);
    Resource resource{agent_id};
    for (const std::string& slot : agent.slot_ids) {
      if (static_cast<int32_t>(resource.slot_ids.size()) == slots) break;
      if (agent.usable(slot)) resource.slot_ids.push_back(slot);
    }
    for (const std::string& slot : resource.slot_ids) agent.used[slot] = task.id;
    if (slots == 0) ++agent.aux;
    task.resources.push_back(std::move(resource));
  }
  task.allocation_id = task.id + "." + std::to_string(++task.allocations);
  task.state = bus::kWorkloadAssigned;
  task.message.clear();  // what was said of an earlier allocation (preempted) is over
  task.backfilled = backfilled;
  task_of_allocation_[task.allocation_id] = task.id;
  listener_.TaskChanged(task);
  for (const Resource& resource : task.resources) SendStart(task, resource);
}

void TaskManager::Preempt(Task& task, const ResourcePoolConfig& pool) {
  PreemptWith(
      task, "preempted for more urgent work",
      std::chrono::duration_cast<std::chrono::milliseconds>(pool.preemption_timeout).count());
}

void TaskManager::PreemptWith(Task& task, std::string reason, int64_t grace_ms) {
  if (task.preempting || task.kill_requested) return;
  task.preempting = true;
  task.message = std::move(reason);
  listener_.TaskChanged(task);
  KillParts(task, grace_ms);
}

Status TaskManager::CheckFits(const TaskSpec& spec, const ResourcePoolConfig& pool) const {
  std::vector<int32_t> agent_slots;
  for (const auto& [id, agent] : agents_) {
    if (agent.pool == pool.pool_name && agent.registered) {
      agent_slots.push_back(static_cast<int32_t>(agent.slot_ids.size()));
    }
  }
  std::optional<scheduler::ProviderSize> provider;
  if (pool.provider) provider = {pool.provider->max_instances, pool.provider->slots_per_instance};
  return scheduler::CheckCanEverFit(spec.slots, spec.single_node, pool.pool_name, agent_slots,
                                    provider);
}

bus::JobSummary TaskManager::JobOf(const std::vector<const Task*>& tasks, int32_t ahead) const {
  const Task& first = *tasks.front();
  bus::JobSummary job;
  job.job_id = first.job_id;
  job.type = first.type;
  job.state = bus::kJobQueued;
  job.resource_pool = first.spec.resource_pool;
  job.jobs_ahead = ahead;
  job.priority = first.priority();
  job.weight = first.spec.weight;
  job.preemptible = first.spec.preemptible;
  job.submitted_at = first.submitted_ns;
  job.name = Join(first.spec.entrypoint, " ");
  job.owner = first.spec.owner;
  for (const Task* task : tasks) {
    job.requested_slots += task->spec.slots;
    if (!task->placed()) continue;
    job.allocated_slots += task->spec.slots;
    if (job.state != bus::kJobScheduled) {
      job.state = task->backfilled ? bus::kJobBackfilled : bus::kJobScheduled;
    }
  }
  return job;
}

std::vector<bus::JobSummary> TaskManager::Jobs(const std::string& pool) const {
  std::map<std::string, std::vector<const Task*>> by_pool;
  for (const auto& [id, open] : open_) {
    const Task& task = *open;
    if (pool.empty() || task.spec.resource_pool == pool) {
      by_pool[task.spec.resource_pool].push_back(&task);
    }
  }
  std::vector<bus::JobSummary> jobs;
  for (auto& [name, tasks] : by_pool) {
    std::sort(tasks.begin(), tasks.end(), QueueOrder);
    std::vector<std::string> order;
    std::map<std::string, std::vector<const Task*>> of_job;
    for (const Task* task : tasks) {
      if (of_job[task->job_id].empty()) order.push_back(task->job_id);
      of_job[task->job_id].push_back(task);
    }
    for (size_t i = 0; i < order.size(); ++i) {
      jobs.push_back(JobOf(of_job[order[i]], static_cast<int32_t>(i)));
    }
  }
  return jobs;
}

Result<bus::JobSummary> TaskManager::UpdateJob(const bus::JobUpdateRequest& update) {
  std::vector<Task*> tasks;
  for (const auto& [id, task] : open_) {
    if (task->job_id == update.job_id) tasks.push_back(task);
  }
  if (tasks.empty()) return NotFound("job " + update.job_id + " not found (or already over)");
  DET_RETURN_IF_ERROR(CheckJobSettings(update.priority, update.weight));
  if (update.resource_pool) {
    DET_ASSIGN_OR_RETURN(const ResourcePoolConfig* pool, KnownPool(*update.resource_pool));
    for (const Task* task : tasks) {
      if (task->placed()) {
        return FailedPrecondition("job " + update.job_id + " runs in pool \"" +
                                  task->spec.resource_pool +
                                  "\"; its pool can change only while it is queued");
      }
      DET_RETURN_IF_ERROR(CheckFits(task->spec, *pool));
    }
  }
  for (Task* task : tasks) {
    if (update.priority) task->spec.priority = *update.priority;
    if (update.weight) task->spec.weight = *update.weight;
    if (update.resource_pool) task->spec.resource_pool = *update.resource_pool;
    listener_.TaskSettingsChanged(*task);
  }
  dirty_ = true;
  for (const bus::JobSummary& job : Jobs(tasks.front()->spec.resource_pool)) {
    if (job.job_id == update.job_id) return job;
  }
  return NotFound("job " + update.job_id + " not found");
}

}  // namespace det::master
