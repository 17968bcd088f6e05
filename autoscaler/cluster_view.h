#pragma once

#include <map>
#include <string>

#include "bus/catalog/agent.h"
#include "bus/catalog/autoscaler.h"
#include "bus/catalog/jobs.h"
#include "bus/event_subscriber.h"

namespace det::autoscaler {

// The autoscaler's picture of the cluster, rebuilt from the master's event bus: a snapshot
// (kReset, then the retained events) followed by live events. Holds nothing the master cannot
// give back: agents, idle agents, pending work per pool, each pool's provider section, and the
// instances as last reported.
class ClusterView {
 public:
  // Applies one subscriber update and returns the pool whose demand or providers it changed
  // ("" if none), so the caller can decide that pool at once. Unknown events are ignored.
  std::string Apply(const bus::EventSubscriber::Update& update);

  const std::map<std::string, bus::AgentStateEvent>& agents() const { return agents_; }
  // Idle agents and since when (Unix nanoseconds).
  const std::map<std::string, int64_t>& idle_since() const { return idle_since_; }
  // The last `cluster.pending` per pool.
  const std::map<std::string, bus::ClusterPending>& pending() const { return pending_; }
  const std::map<std::string, bus::PoolProviderEvent>& providers() const { return providers_; }
  // The instances as last reported on the bus (`instance.state`, by this or an earlier
  // autoscaler), by id.
  const std::map<std::string, bus::InstanceInfo>& instances() const { return instances_; }
  int resets() const { return resets_; }

 private:
  void ApplyAgent(const bus::BusEvent& event);
  void ApplyIdle(const bus::BusEvent& event);
  std::string ApplyPending(const bus::BusEvent& event);
  std::string ApplyProvider(const bus::BusEvent& event);
  void ApplyInstance(const bus::BusEvent& event);

  std::map<std::string, bus::AgentStateEvent> agents_;
  std::map<std::string, int64_t> idle_since_;
  std::map<std::string, bus::ClusterPending> pending_;
  std::map<std::string, bus::PoolProviderEvent> providers_;
  std::map<std::string, bus::InstanceInfo> instances_;
  int resets_ = 0;
};

}  // namespace det::autoscaler
