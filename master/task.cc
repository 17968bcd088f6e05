#include "master/task.h"

#include <algorithm>

namespace det::master {

bool Task::RunsOn(const std::string& agent_id) const {
  return std::any_of(resources.begin(), resources.end(),
                     [&](const Resource& r) { return r.agent_id == agent_id; });
}

std::vector<std::string> Task::Agents() const {
  std::vector<std::string> agents;
  for (const Resource& resource : resources) agents.push_back(resource.agent_id);
  return agents;
}

bus::TaskSummary Task::Summary() const {
  bus::TaskSummary s;
  s.id = id;
  s.type = type;
  s.state = state;
  s.resource_pool = spec.resource_pool;
  s.slots = spec.slots;
  s.agents = Agents();
  s.entrypoint = spec.entrypoint;
  s.exit_code = exit_code;
  s.failure_type = failure_type;
  s.message = message;
  s.submitted_at = submitted_ns;
  s.ended_at = ended_ns;
  s.priority = priority();
  s.weight = spec.weight;
  s.preemptible = spec.preemptible;
  s.preempting = preempting;
  s.allocations = allocations;
  s.allocation_id = allocation_id;
  return s;
}

}  // namespace det::master
