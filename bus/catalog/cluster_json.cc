#include "bus/catalog/cluster_json.h"

namespace det::bus {

nlohmann::ordered_json ToJson(const AgentSummary& a) {
  nlohmann::ordered_json slots = nlohmann::ordered_json::array();
  for (const auto& s : a.slots) {
    slots.push_back({{"id", s.id},
                     {"type", s.type},
                     {"brand", s.brand},
                     {"uuid", s.uuid},
                     {"memory_mib", s.memory_mib}});
  }
  nlohmann::ordered_json utilization = nlohmann::ordered_json::array();
  for (const auto& u : a.utilization) {
    utilization.push_back({{"slot_id", u.slot_id},
                           {"utilization_percent", u.utilization_percent},
                           {"memory_used_mib", u.memory_used_mib}});
  }
  nlohmann::ordered_json json = {{"id", a.id},
                                 {"state", a.state},
                                 {"resource_pool", a.resource_pool},
                                 {"hostname", a.hostname},
                                 {"version", a.version},
                                 {"slots", a.slots.size()},
                                 {"devices", slots},
                                 {"enabled", a.enabled},
                                 {"draining", a.draining},
                                 {"disabled_slots", a.disabled_slots},
                                 {"used_slots", a.used_slots},
                                 {"utilization", utilization},
                                 {"last_heard_ms_ago", a.last_heard_ms_ago}};
  if (!a.interruption.empty()) json["interruption"] = a.interruption;
  return json;
}

nlohmann::ordered_json ToJson(const TaskSummary& t) {
  nlohmann::ordered_json json = {{"id", t.id},
                                 {"type", t.type},
                                 {"state", t.state},
                                 {"resource_pool", t.resource_pool},
                                 {"slots", t.slots},
                                 {"agents", t.agents},
                                 {"entrypoint", t.entrypoint},
                                 {"exit_code", t.exit_code},
                                 {"failure_type", t.failure_type},
                                 {"message", t.message},
                                 {"submitted_at", t.submitted_at},
                                 {"ended_at", t.ended_at},
                                 {"priority", t.priority},
                                 {"weight", t.weight},
                                 {"preemptible", t.preemptible},
                                 {"preempting", t.preempting},
                                 {"allocations", t.allocations},
                                 {"allocation_id", t.allocation_id}};
  if (t.max_restarts > 0) {
    json["restarts"] = t.restarts;
    json["max_restarts"] = t.max_restarts;
  }
  if (!t.array_id.empty()) {
    json["array_id"] = t.array_id;
    json["array_index"] = t.array_index;
  }
  return json;
}

nlohmann::ordered_json ToJson(const JobSummary& j) {
  return {{"job_id", j.job_id},
          {"type", j.type},
          {"state", j.state},
          {"resource_pool", j.resource_pool},
          {"jobs_ahead", j.jobs_ahead},
          {"requested_slots", j.requested_slots},
          {"allocated_slots", j.allocated_slots},
          {"priority", j.priority},
          {"weight", j.weight},
          {"preemptible", j.preemptible},
          {"submitted_at", j.submitted_at},
          {"name", j.name}};
}

nlohmann::ordered_json ToJson(const TaskLogLine& line) {
  return {{"id", line.id},
          {"timestamp", line.timestamp},
          {"agent", line.agent_id},
          {"stdtype", line.stdtype},
          {"log", line.text}};
}

nlohmann::ordered_json ToJson(const MasterLogLine& line) {
  return {{"id", line.id},
          {"timestamp", line.timestamp},
          {"level", line.level},
          {"message", line.message}};
}

nlohmann::ordered_json ToJson(const MasterInfo& info) {
  return {{"version", info.version},       {"cluster_name", info.cluster_name},
          {"cluster_id", info.cluster_id}, {"master_id", info.master_id},
          {"started_at", info.started_at}, {"gateway_port", info.gateway_port}};
}

nlohmann::ordered_json ToJson(const ResourcePoolSummary& pool) {
  return {{"name", pool.name},
          {"description", pool.description},
          {"scheduler", pool.scheduler},
          {"fitting_policy", pool.fitting_policy},
          {"preemption", pool.preemption},
          {"default_priority", pool.default_priority},
          {"provider", pool.provider},
          {"min_instances", pool.min_instances},
          {"max_instances", pool.max_instances},
          {"slots_per_instance", pool.slots_per_instance},
          {"default_compute", pool.default_compute},
          {"default_aux", pool.default_aux},
          {"agents", pool.agents},
          {"slots", pool.slots},
          {"used_slots", pool.used_slots}};
}

nlohmann::ordered_json ToJson(const InstanceInfo& i) {
  return {{"id", i.id},
          {"resource_pool", i.resource_pool},
          {"provider", i.provider},
          {"instance_type", i.instance_type},
          {"zone", i.zone},
          {"spot", i.spot},
          {"state", i.state},
          {"agent", i.agent},
          {"launched_at", i.launched_at},
          {"terminated_at", i.terminated_at}};
}

nlohmann::ordered_json ToJson(const ScalingDecisionEvent& d) {
  nlohmann::ordered_json terminated = nlohmann::ordered_json::array();
  for (const auto& t : d.terminated) terminated.push_back({{"id", t.id}, {"reason", t.reason}});
  return {{"resource_pool", d.resource_pool},
          {"decided_at", d.decided_at},
          {"launch", d.launch},
          {"launched", d.launched},
          {"launch_reason", d.launch_reason},
          {"terminated", terminated},
          {"error", d.error}};
}

}  // namespace det::bus
