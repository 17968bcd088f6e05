#include "master/cluster/idle_tracker.h"

namespace det::master {

bool IdleTracker::Update(const std::vector<AgentNow>& agents, int64_t now_ns) {
  std::map<std::string, bus::IdleAgent> idle;
  for (const AgentNow& agent : agents) {
    if (!agent.idle) continue;
    auto before = idle_.find(agent.agent_id);
    const int64_t since = before == idle_.end() ? now_ns : before->second.idle_since;
    idle[agent.agent_id] = {agent.agent_id, agent.resource_pool, since};
  }
  const bool changed = idle != idle_;
  idle_ = std::move(idle);
  return changed;
}

bus::ClusterIdle IdleTracker::current() const {
  bus::ClusterIdle now;
  for (const auto& [id, agent] : idle_) now.agents.push_back(agent);
  return now;
}

}  // namespace det::master
