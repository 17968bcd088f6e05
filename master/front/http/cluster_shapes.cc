#include "master/front/http/cluster_shapes.h"

#include <algorithm>
#include <map>

#include "common/clock.h"

namespace det::master::http {
namespace {

using nlohmann::ordered_json;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// "TYPE_COMMAND", "TYPE_EXPERIMENT", ... (jobv1Type) for this master's job types.
std::string JobTypeName(const std::string& type) {
  std::string upper = type;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "TRIAL") upper = "EXPERIMENT";
  return upper.empty() ? "TYPE_UNSPECIFIED" : "TYPE_" + upper;
}

ordered_json DeviceJson(const bus::SlotInfo& slot, size_t index) {
  return {{"id", index},
          {"brand", slot.brand},
          {"uuid", slot.uuid},
          {"type", DeviceTypeName(slot.type)}};
}

// slotStats: per device type and per brand, how many slots there are, disabled, draining, and in
// each container state.
ordered_json SlotStatsJson(const bus::AgentSummary& agent) {
  ordered_json by_type = ordered_json::object();
  ordered_json by_brand = ordered_json::object();
  for (const auto& slot : agent.slots) {
    const bool disabled = Contains(agent.disabled_slots, slot.id);
    const bool used = agent.slot_tasks.count(slot.id) > 0;
    for (auto* stats : {&by_type[DeviceTypeName(slot.type)], &by_brand[slot.brand]}) {
      if (stats->is_null()) {
        *stats = {
            {"disabled", 0}, {"draining", 0}, {"total", 0}, {"states", ordered_json::object()}};
      }
      (*stats)["total"] = (*stats)["total"].get<int>() + 1;
      if (disabled) (*stats)["disabled"] = (*stats)["disabled"].get<int>() + 1;
      if (disabled && agent.draining) (*stats)["draining"] = (*stats)["draining"].get<int>() + 1;
      if (used) {
        ordered_json& running = (*stats)["states"]["STATE_RUNNING"];
        running = running.is_null() ? 1 : running.get<int>() + 1;
      }
    }
  }
  return {{"typeStats", by_type}, {"brandStats", by_brand}};
}

}  // namespace

std::string DeviceTypeName(const std::string& slot_type) {
  if (slot_type == "cpu") return "TYPE_CPU";
  if (slot_type == "cuda" || slot_type == "gpu") return "TYPE_CUDA";
  if (slot_type == "rocm") return "TYPE_ROCM";
  return "TYPE_UNSPECIFIED";
}

std::string TimeText(int64_t unix_ns) { return Rfc3339Utc(unix_ns, 6); }

ordered_json SlotJson(const bus::AgentSummary& agent, const bus::SlotInfo& slot) {
  const bool disabled = Contains(agent.disabled_slots, slot.id);
  size_t index = 0;
  while (index < agent.slots.size() && agent.slots[index].id != slot.id) ++index;
  ordered_json json = {{"id", slot.id},
                       {"device", DeviceJson(slot, index)},
                       {"enabled", !disabled},
                       {"draining", disabled && agent.draining},
                       {"memoryMib", slot.memory_mib}};
  if (auto task = agent.slot_tasks.find(slot.id); task != agent.slot_tasks.end()) {
    json["container"] = {{"id", task->second},
                         {"parent", task->second},
                         {"state", "STATE_RUNNING"},
                         {"devices", ordered_json::array({DeviceJson(slot, index)})}};
  }
  return json;
}

ordered_json AgentJson(const bus::AgentSummary& agent) {
  ordered_json slots = ordered_json::object();
  ordered_json containers = ordered_json::object();
  for (const auto& slot : agent.slots) {
    ordered_json json = SlotJson(agent, slot);
    if (json.contains("container"))
      containers[json["container"]["id"].get<std::string>()] = json["container"];
    slots[slot.id] = std::move(json);
  }
  ordered_json utilization = ordered_json::array();
  for (const auto& u : agent.utilization) {
    utilization.push_back({{"slotId", u.slot_id},
                           {"utilizationPercent", u.utilization_percent},
                           {"memoryUsedMib", u.memory_used_mib}});
  }
  ordered_json json = {{"id", agent.id},
                       {"registeredTime", TimeText(agent.registered_at)},
                       {"slots", slots},
                       {"containers", containers},
                       {"resourcePools", ordered_json::array({agent.resource_pool})},
                       {"addresses", ordered_json::array({agent.hostname})},
                       {"enabled", agent.enabled},
                       {"draining", agent.draining},
                       {"version", agent.version},
                       {"slotStats", SlotStatsJson(agent)},
                       {"state", agent.state},
                       {"hostname", agent.hostname},
                       {"usedSlots", agent.used_slots},
                       {"utilization", utilization},
                       {"lastHeardMsAgo", agent.last_heard_ms_ago}};
  if (!agent.interruption.empty()) json["interruption"] = agent.interruption;
  return json;
}

ordered_json ResourcePoolJson(const bus::ResourcePoolSummary& pool) {
  const std::string type = pool.provider == "aws"   ? "RESOURCE_POOL_TYPE_AWS"
                           : pool.provider == "gcp" ? "RESOURCE_POOL_TYPE_GCP"
                                                    : "RESOURCE_POOL_TYPE_STATIC";
  const std::string scheduler = pool.scheduler == "fair_share"    ? "SCHEDULER_TYPE_FAIR_SHARE"
                                : pool.scheduler == "round_robin" ? "SCHEDULER_TYPE_ROUND_ROBIN"
                                                                  : "SCHEDULER_TYPE_PRIORITY";
  const std::string fitting =
      pool.fitting_policy == "worst" ? "FITTING_POLICY_WORST" : "FITTING_POLICY_BEST";
  return {{"name", pool.name},
          {"description", pool.description},
          {"type", type},
          {"numAgents", pool.agents},
          {"slotsAvailable", pool.slots},
          {"slotsUsed", pool.used_slots},
          {"slotType", "TYPE_UNSPECIFIED"},
          {"auxContainerCapacity", 0},
          {"auxContainersRunning", 0},
          {"defaultComputePool", pool.default_compute},
          {"defaultAuxPool", pool.default_aux},
          {"preemptible", pool.preemption},
          {"minAgents", pool.min_instances},
          {"maxAgents", pool.max_instances},
          {"slotsPerAgent", pool.slots_per_instance},
          {"auxContainerCapacityPerAgent", 0},
          {"schedulerType", scheduler},
          {"schedulerFittingPolicy", fitting},
          {"location", ""},
          {"imageId", ""},
          {"instanceType", ""},
          {"masterUrl", ""},
          {"masterCertName", ""},
          {"startupScript", ""},
          {"containerStartupScript", ""},
          {"agentDockerNetwork", ""},
          {"agentDockerRuntime", ""},
          {"agentDockerImage", ""},
          {"agentFluentImage", ""},
          {"maxIdleAgentPeriod", 0},
          {"maxAgentStartingPeriod", 0},
          {"details",
           {{"priorityScheduler",
             {{"preemption", pool.preemption}, {"defaultPriority", pool.default_priority}}}}},
          {"clusterName", ""},
          {"resourceManagerMetadata", ordered_json::object()},
          {"provider", pool.provider}};
}

ordered_json JobJson(const bus::JobSummary& job) {
  return {{"jobId", job.job_id},
          {"type", JobTypeName(job.type)},
          {"submissionTime", TimeText(job.submitted_at)},
          {"username", job.owner},
          {"resourcePool", job.resource_pool},
          {"isPreemptible", job.preemptible},
          {"priority", job.priority},
          {"weight", job.weight},
          {"entityId", job.job_id},
          {"requestedSlots", job.requested_slots},
          {"allocatedSlots", job.allocated_slots},
          {"name", job.name},
          {"workspaceId", kDefaultWorkspaceId},
          {"summary", {{"state", "STATE_" + job.state}, {"jobsAhead", job.jobs_ahead}}}};
}

ordered_json AllocationSummaryJson(const bus::TaskSummary& task) {
  ordered_json resources = ordered_json::array();
  for (const auto& agent : task.agents) {
    resources.push_back({{"resourcesId", task.allocation_id + "/" + agent},
                         {"resourcesType", "RESOURCES_TYPE_DOCKER_CONTAINER"},
                         {"allocationId", task.allocation_id},
                         {"agentDevices", {{agent, ordered_json::array()}}},
                         {"containerId", task.id},
                         {"started", {{"addresses", ordered_json::array()}}}});
  }
  std::string name = task.type + " (";
  for (const auto& word : task.entrypoint) name += (name.back() == '(' ? "" : " ") + word;
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  name += ")";
  return {{"taskId", task.id},
          {"allocationId", task.allocation_id},
          {"name", name},
          {"registeredTime", TimeText(task.submitted_at)},
          {"resourcePool", task.resource_pool},
          {"slotsNeeded", task.slots},
          {"resources", resources},
          {"schedulerType", "priority"},
          {"priority", task.priority},
          {"proxyPorts", ordered_json::array()}};
}

ordered_json TaskJson(const bus::TaskSummary& t) {
  ordered_json json = {{"id", t.id},
                       {"type", t.type},
                       {"state", t.state},
                       {"resourcePool", t.resource_pool},
                       {"slots", t.slots},
                       {"agents", t.agents},
                       {"entrypoint", t.entrypoint},
                       {"exitCode", t.exit_code},
                       {"failureType", t.failure_type},
                       {"message", t.message},
                       {"submittedAt", TimeText(t.submitted_at)},
                       {"endedAt", t.ended_at == 0 ? "" : TimeText(t.ended_at)},
                       {"priority", t.priority},
                       {"weight", t.weight},
                       {"preemptible", t.preemptible},
                       {"preempting", t.preempting},
                       {"allocations", t.allocations},
                       {"allocationId", t.allocation_id}};
  if (t.max_restarts > 0) {
    json["restarts"] = t.restarts;
    json["maxRestarts"] = t.max_restarts;
  }
  if (!t.array_id.empty()) {
    json["arrayId"] = t.array_id;
    json["arrayIndex"] = t.array_index;
  }
  return json;
}

}  // namespace det::master::http
