#include "master/cluster/task.h"

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

std::string ArrayTaskId(const std::string& array_id, int64_t index) {
  return array_id + "_" + std::to_string(index);
}

std::optional<ArrayPlace> ArrayPlaceOf(std::string_view task_id) {
  constexpr size_t kIdDigits = 32;
  if (task_id.size() < kIdDigits + 2 || task_id[kIdDigits] != '_') return std::nullopt;
  const std::string_view id = task_id.substr(0, kIdDigits);
  const std::string_view index = task_id.substr(kIdDigits + 1);
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (!std::all_of(id.begin(), id.end(), hex) ||
      !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      index.size() > 18) {
    return std::nullopt;
  }
  return ArrayPlace{std::string(id), std::stoll(std::string(index))};
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
  s.restarts = restarts;
  s.max_restarts = spec.max_restarts;
  s.allocation_id = allocation_id;
  s.owner = spec.owner;
  s.description = spec.description;
  if (std::optional<ArrayPlace> place = ArrayPlaceOf(id)) {
    s.array_id = place->array_id;
    s.array_index = place->index;
  }
  return s;
}

}  // namespace det::master
