#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"

namespace det::master {

// Which agents are idle (connected, no slot in use) and since when: what `cluster.idle` says and
// what the autoscaler scales down by.
//
// Threading: not thread-safe; owned by the agent registry's actor.
class IdleTracker {
 public:
  struct AgentNow {
    std::string agent_id;
    std::string resource_pool;
    bool idle = false;
  };

  // Records the agents as they are at `now_ns`; returns whether the idle set changed (an agent
  // became idle or busy, joined or left), in which case current() is worth publishing.
  bool Update(const std::vector<AgentNow>& agents, int64_t now_ns);
  bus::ClusterIdle current() const;

 private:
  std::map<std::string, bus::IdleAgent> idle_;  // by agent id
};

}  // namespace det::master
